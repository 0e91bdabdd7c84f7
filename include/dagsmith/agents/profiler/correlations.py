"""Correlations: Pearson among numbers, and each column's association with the likeliest target (Cramér's V between
categories, the correlation ratio between categories and numbers), strongest first."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dagsmith.agents.profiler.common import MAX_DETAILED_COLUMNS, MAX_LEVELS, S, is_numeric, is_text
from dagsmith.agents.profiler.semantic import NOT_FEATURES
from dagsmith.models.profile import ColumnProfile, Correlation, TargetCandidate
from dagsmith_kit.frames import with_columns

MAX_CORRELATIONS = 20


def as_numbers(sample: pd.DataFrame, profiles: dict[str, ColumnProfile]) -> pd.DataFrame:
    """Numbers stored as text, as numbers (stray words missing), so they correlate as what they are."""
    stored = [name for name in sample.columns if profiles[name].not_numbers or (
        profiles[name].semantic_type is S.NUMERIC and is_text(sample[name]))]
    return with_columns(sample, {name: pd.to_numeric(sample[name], errors="coerce") for name in stored}) if stored \
        else sample


def pearson_matrix(sample: pd.DataFrame, profiles: dict[str, ColumnProfile]) -> pd.DataFrame:
    numeric = [
        name for name in sample.columns
        if is_numeric(sample[name]) and profiles[name].unique > 1
        and profiles[name].semantic_type not in (S.ID, S.POSTAL_CODE)
    ]
    return sample[numeric].corr()


def correlated_pairs(matrix: pd.DataFrame, above: float = -1.0,
                     strongest: int | None = None) -> list[tuple[str, str, float]]:
    """Pairs of distinct columns whose |r| is over ``above`` (never NaN), only the ``strongest`` if given.

    Row by row, keeping at most ``strongest`` per row: a table of 10,000 columns has 50 million pairs, which must
    never be materialised as Python objects.
    """
    values, names = matrix.to_numpy(), list(matrix.columns)
    found: list[tuple[str, str, float]] = []
    for i in range(len(names) - 1):
        row = values[i, i + 1:]
        hits = np.flatnonzero(np.abs(row) > above)  # NaN compares false
        if strongest is not None and len(hits) > strongest:
            hits = hits[np.argpartition(-np.abs(row[hits]), strongest)[:strongest]]
        found.extend((names[i], names[i + 1 + j], float(row[j])) for j in hits)
        if strongest is not None and len(found) > 2 * strongest:
            found.sort(key=lambda pair: abs(pair[2]), reverse=True)
            del found[strongest:]
    return found


def listed_correlations(
    matrix: pd.DataFrame, sample: pd.DataFrame, profiles: dict[str, ColumnProfile], candidates: list[TargetCandidate]
) -> list[Correlation]:
    """Pearson among numbers, plus each feature's association with the best target candidate; strongest first."""
    found = [Correlation(a=a, b=b, method="pearson", value=round(r, 4))
             for a, b, r in correlated_pairs(matrix, strongest=MAX_CORRELATIONS)]
    if candidates:
        found += _associations(sample, candidates[0].column, profiles)
    found.sort(key=lambda correlation: abs(correlation.value), reverse=True)
    return found[:MAX_CORRELATIONS]


def _associations(sample: pd.DataFrame, target: str, profiles: dict[str, ColumnProfile]) -> list[Correlation]:
    """Cramér's V between categories, the correlation ratio between categories and numbers (Pearson does the rest)."""
    y = sample[target]
    y_categorical = not is_numeric(y)
    found = []
    for name in sample.columns[:MAX_DETAILED_COLUMNS]:
        x, profile = sample[name], profiles[name]
        x_categorical = not is_numeric(x)
        if name == target or profile.semantic_type in NOT_FEATURES or not (x_categorical or y_categorical):
            continue
        if x_categorical and profile.unique > MAX_LEVELS:
            continue
        if x_categorical and y_categorical:
            value, method = _cramers_v(x, y), "cramers_v"
        else:
            categories, numbers = (y, x) if y_categorical else (x, y)
            value, method = _correlation_ratio(categories, numbers), "correlation_ratio"
        found.append(Correlation(a=name, b=target, method=method, value=round(value, 4)))
    return found


def _cramers_v(a: pd.Series, b: pd.Series) -> float:
    table = pd.crosstab(a, b).to_numpy(dtype=float)
    n, k = table.sum(), min(table.shape) - 1
    if n == 0 or k == 0:
        return 0.0
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / n
    chi2 = float(((table - expected) ** 2 / expected).sum())
    return math.sqrt(chi2 / (n * k))


def _correlation_ratio(categories: pd.Series, values: pd.Series) -> float:
    """eta: the share of the numbers' spread explained by the categories, as a correlation in [0, 1]."""
    frame = pd.DataFrame({"group": categories, "value": values}).dropna()
    if frame.empty:
        return 0.0
    mean = frame["value"].mean()
    groups = frame.groupby("group", observed=True)["value"].agg(["mean", "count"])
    between = float((groups["count"] * (groups["mean"] - mean) ** 2).sum())
    total = float(((frame["value"] - mean) ** 2).sum())
    return math.sqrt(between / total) if total > 0 else 0.0
