"""The quality score: completeness, consistency (plausibility expectations validated by great-expectations) and
uniqueness, combined by a weighted harmonic mean so one weak axis pulls the score down."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from dagsmith.agents.profiler.common import MAX_DETAILED_COLUMNS, S, is_numeric, is_text, percent, ratio, show, tokens
from dagsmith.agents.profiler.correlations import correlated_pairs
from dagsmith.agents.profiler.semantic import LATITUDE_WORDS, PATTERNS, boolean_pair
from dagsmith.agents.profiler.table import Table
from dagsmith.models.profile import ColumnProfile

#: Above this many cells, duplicate rows are counted on the sample: hashing every row of a very wide table is slow.
DUPLICATE_CELLS = 20_000_000
QUALITY_WEIGHTS = {"completeness": 0.4, "consistency": 0.3, "uniqueness": 0.3}
#: Share of values that must lie within fences derived from the data: a few extreme but genuine values in a large
#: sample are expected, so they are reported as column issues without failing the check.
FENCE_MOSTLY = 0.999
PERCENT_WORDS = {"percent", "percentage", "pct", "perc"}
NONNEGATIVE_WORDS = {
    "age", "count", "counts", "qty", "quantity", "price", "cost", "amount", "salary", "income", "sales", "revenue",
    "weight", "height", "length", "width", "size", "area", "duration", "distance", "mass", "volume", "total",
    "charges", "tenure", "fee", "fees", "years", "months", "days", "hours", "minutes", "seconds", "mm", "cm", "kg",
}


def completeness_score(columns: list[ColumnProfile]) -> tuple[float, list[str]]:
    """1 - the share of missing cells: every cell counts the same, so one empty column among 10 costs 0.1."""
    cells = sum(column.count + column.missing for column in columns)
    gaps = sorted((column for column in columns if column.missing), key=lambda column: -column.missing_ratio)
    missing = sum(column.missing for column in gaps)
    if not missing:
        return 1.0, []
    worst = ", ".join(f"{column.name} {percent(column.missing_ratio)}" for column in gaps[:3])
    where = f"{len(gaps)} column{'s' if len(gaps) > 1 else ''} ({worst})"
    return 1 - missing / cells, [f"{percent(missing / cells)} of cells missing in {where}"]


def checked_for_duplicates(table: Table) -> pd.DataFrame:
    """The rows duplicates are counted on: all of them unless the table is very wide or streamed."""
    return table.full if table.full is not None and table.full.size <= DUPLICATE_CELLS else table.sample


def near_identical(sample: pd.DataFrame, correlation: pd.DataFrame) -> list[list[str]]:
    """Groups of columns that carry the same information: |Pearson r| > 0.999, or equal up to relabelling.

    Relabelled copies ('yes'/'no' beside 1/0) share their factorised codes; columns with many distinct values are
    compared by their values instead, as any two all-distinct columns share codes 0..n-1.
    """
    pairs = [(a, b) for a, b, _ in correlated_pairs(correlation, above=0.999)]
    by_content: dict[bytes, list[str]] = {}
    for name in sample.columns:
        series = sample[name]
        distinct = series.nunique()
        if distinct < 2:
            continue  # constants are reported as constant, not as copies of each other
        if distinct <= 0.5 * len(series):
            content = pd.factorize(series)[0]
        else:
            content = pd.util.hash_pandas_object(series, index=False).to_numpy()
        by_content.setdefault(hashlib.blake2b(content.tobytes(), digest_size=16).digest(), []).append(name)
    pairs += [(group[0], other) for group in by_content.values() for other in group[1:]]
    return _connected(pairs, list(sample.columns))


def _connected(pairs: list[tuple[str, str]], order: list[str]) -> list[list[str]]:
    """Pairs merged into groups (union-find), each group and the group list in column order."""
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        while parent.setdefault(name, name) != name:
            name = parent[name]
        return name

    for a, b in pairs:
        parent[root(a)] = root(b)
    groups: dict[str, list[str]] = {}
    for name in order:
        if name in parent:
            groups.setdefault(root(name), []).append(name)
    return [group for group in groups.values() if len(group) > 1]


def uniqueness_score(duplicates: int, checked_rows: int, groups: list[list[str]],
                     n_columns: int) -> tuple[float, list[str]]:
    """(1 - duplicate row share) x (1 - redundant column share): a copied column counts like a copied row."""
    redundant = sum(len(group) - 1 for group in groups)
    value = (1 - ratio(duplicates, checked_rows)) * (1 - redundant / n_columns)
    share = percent(ratio(duplicates, checked_rows))
    issues = [f"{duplicates:,} duplicate rows ({share} of {checked_rows:,} checked)"] if duplicates else []
    issues += [f"near-identical columns: {' = '.join(group)}" for group in groups]
    return value, issues


def weighted_harmonic_mean(axes: dict[str, float], weights: dict[str, float]) -> float:
    """sum(w) / sum(w / x): dominated by the weakest axis, and 0 as soon as one axis is 0."""
    if any(axes[axis] <= 0 for axis in weights):
        return 0.0
    return sum(weights.values()) / sum(weight / axes[axis] for axis, weight in weights.items())


#: Lowest and highest plausible value (None: unbounded) and the share of values that must lie between them.
_Bounds = tuple[float | None, float | None, float]


@dataclass(frozen=True)
class _Check:
    """One expectation on one column, and how to word its failure as a column issue."""

    column: str
    expectation: Any
    issue: Callable[[int, str], str]


def load_expectations() -> None:
    """Import great-expectations ahead of the first profile (2.5 s), in a process that forks the tasks that profile."""
    import great_expectations.expectations  # noqa: F401
    from great_expectations.data_context.types.base import ProgressBarsConfig  # noqa: F401


def consistency_score(sample: pd.DataFrame, profiles: dict[str, ColumnProfile]) -> tuple[float, list[str], list[str]]:
    """Share of plausibility expectations that pass on the sample, validated as one great-expectations suite.

    Every unexpected value becomes a column issue, even where a tolerant check passed; expectations that raised
    are left out of the share and returned as skipped.
    """
    import great_expectations.expectations as gxe

    checks = [check for name in sample.columns[:MAX_DETAILED_COLUMNS]
              if (check := _check_for(sample[name], profiles[name], gxe))]
    limited = ([f"plausibility checked on the first {MAX_DETAILED_COLUMNS:,} of {sample.shape[1]:,} columns"]
               if sample.shape[1] > MAX_DETAILED_COLUMNS else [])
    if not checks:
        return 1.0, limited, []
    results = _validate(sample[[check.column for check in checks]], checks)
    failed, skipped = [], []
    for check, result in zip(checks, results, strict=True):
        if result.exception_info.get("raised_exception"):
            skipped.append(check.column)
            continue
        unexpected = int(result.result.get("unexpected_count") or 0)
        if result.success and not unexpected:
            continue
        examples = ", ".join(show(value) for value in result.result.get("partial_unexpected_list", [])[:3])
        issue = check.issue(unexpected, examples)
        profiles[check.column].issues.append(issue)
        if not result.success:
            failed.append(f"{check.column}: {issue}")
    evaluated = len(checks) - len(skipped)
    if not failed:
        return 1.0, limited, skipped
    listed = "; ".join(failed[:5]) + ("; ..." if len(failed) > 5 else "")
    return (1 - len(failed) / evaluated,
            [f"{len(failed)} of {evaluated} plausibility checks failed: {listed}", *limited], skipped)


def _validate(frame: pd.DataFrame, checks: list[_Check]) -> list[Any]:
    """Run the checks as one suite on one batch of an ephemeral context; results come back in suite order."""
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    batch = (
        context.data_sources.add_pandas("profiler")
        .add_dataframe_asset("table")
        .add_batch_definition_whole_dataframe("sample")
        .get_batch(batch_parameters={"dataframe": frame})
    )
    suite = gx.ExpectationSuite(name="plausibility", expectations=[check.expectation for check in checks])
    return batch.validate(suite, result_format={"result_format": "BASIC", "partial_unexpected_count": 3}).results


def _check_for(series: pd.Series, column: ColumnProfile, gxe: Any) -> _Check | None:
    """The expectation a column's semantic type implies, if any."""
    name, kind = column.name, column.semantic_type
    if column.count == 0:
        return None
    if kind is S.NUMERIC and is_numeric(series):
        bounds = _plausible_range(series.dropna().astype(float), set(tokens(name)))
        return _range_check(gxe, name, bounds, "") if bounds else None
    if kind is S.GEO:
        limit = 90 if set(tokens(name)) & LATITUDE_WORDS else 180
        return _range_check(gxe, name, (-limit, limit, 1.0), " degrees")
    if kind in PATTERNS and is_text(series):
        pattern, noun = PATTERNS[kind]
        expectation = gxe.ExpectColumnValuesToMatchRegex(column=name, regex=pattern)
        if kind is S.NUMERIC:
            return _Check(name, expectation, lambda n, e: f"mixed types ({n:,} values are not numbers, e.g. {e})")
        return _Check(name, expectation, lambda n, e: f"{n:,} values do not look like {noun} (e.g. {e})")
    if kind is S.BOOLEAN and not ptypes.is_bool_dtype(series):
        return _boolean_check(series, name, gxe)
    if kind is S.ID and column.unique_ratio >= 0.9:
        expectation = gxe.ExpectColumnValuesToBeUnique(column=name)
        return _Check(name, expectation, lambda n, e: f"repeated identifiers ({n:,} rows share an id, e.g. {e})")
    return None


def _range_check(gxe: Any, name: str, bounds: _Bounds, unit: str) -> _Check:
    low, high, mostly = bounds
    expectation = gxe.ExpectColumnValuesToBeBetween(column=name, min_value=low, max_value=high, mostly=mostly)
    span = f"[{show(low) if low is not None else '-inf'}, {show(high) if high is not None else 'inf'}]{unit}"
    return _Check(name, expectation, lambda n, e: f"values out of plausible range ({n:,} outside {span}, e.g. {e})")


def _boolean_check(series: pd.Series, name: str, gxe: Any) -> _Check | None:
    values = series.dropna()
    pair = boolean_pair(values.astype(str).str.strip())
    if pair is None:
        return None
    allowed = [value for value in values.unique().tolist() if str(value).strip().lower() in pair]
    expectation = gxe.ExpectColumnValuesToBeInSet(column=name, value_set=allowed)
    spellings = " or ".join(sorted(pair))
    return _Check(name, expectation, lambda n, e: f"{n:,} values are not {spellings} (e.g. {e})")


def _plausible_range(values: pd.Series, words: set[str]) -> _Bounds | None:
    """Known ranges where the name and the data agree (ages 0-120, percentages 0-100, non-negative quantities),
    else robust fences from the data. Known ranges hold for every value, fences for ``FENCE_MOSTLY`` of them.
    None when neither bound can be judged."""
    known = [(0.0, 120.0)] if words & {"age"} else []
    known += [(0.0, 100.0)] if words & PERCENT_WORDS else []
    known += [(0.0, None)] if words & NONNEGATIVE_WORDS else []
    fitting = next((bounds for bounds in known if _share_within(values, *bounds) >= 0.95), None)
    if fitting and fitting[1] is not None:
        return fitting[0], fitting[1], 1.0
    low, high = _fences(values, nonnegative=fitting is not None or values.quantile(0.01) >= 0)
    return (low, high, FENCE_MOSTLY) if low is not None or high is not None else None


def _share_within(values: pd.Series, low: float, high: float | None) -> float:
    return float(values.between(low, high if high is not None else math.inf).mean())


def _fences(values: pd.Series, nonnegative: bool) -> tuple[float | None, float | None]:
    """The 1st-99th percentile range widened by its own width on each side: far enough out that heavy but genuine
    tails pass, close enough that typos, unit slips and sentinels fail. Non-negative data are fenced on a log scale
    (relative to their median, so units do not matter) and must not go below 0. No spread, no fence."""
    scale = float(values[values > 0].median()) if nonnegative and (values > 0).any() else 1.0
    scaled = np.log1p(values.clip(lower=0) / scale) if nonnegative else values
    low, high = scaled.quantile([0.01, 0.99])
    width = high - low
    if width == 0:
        return (0.0 if nonnegative else None), None
    if nonnegative:
        top = float(np.expm1(high + width) * scale)
        return 0.0, top if math.isfinite(top) else None
    return float(low - width), float(high + width)
