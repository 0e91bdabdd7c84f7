"""What anomaly detectors share: which rows to flag, why each flagged row is unusual, and how it is written.

A detector only scores rows (higher is more anomalous). How many to flag is one rule for every detector, so a
person gets a list short enough to act on whatever the method: the goal's fraction when it gives one, else the
rows whose score lies beyond the upper Tukey fence of all scores, kept between ``AUTO_SHARE`` of the rows.
Each flagged row is explained in the table's own terms: the values that sit farthest from the rest of the data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from dagsmith_kit.bundle import Bundle
from dagsmith_kit.indicators import Indicator, indicators
from dagsmith_kit.insight import readable_number
from dagsmith_kit.service import ServiceError
from dagsmith_kit.unsupervised import TableInput, save_row_model

#: the least and most of the rows flagged when the goal gives no fraction: a short list, never a quarter of the table.
AUTO_SHARE = (0.01, 0.05)
#: features named per flagged row, and how unusual (in robust standard deviations) a value must be to be named.
REASONS_PER_ROW = 3
UNUSUAL_Z = 2.0
#: rows listed in the report.
REPORT_ROWS = 10
#: training rows a saved detector keeps to explain new rows against.
BASIS_ROWS = 5000


def fraction_of(value: Any) -> float | None:
    """A ``contamination`` param as a fraction of rows, or None for the automatic rule."""
    if value in (None, "auto"):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 0.5:
        raise ServiceError(f"contamination must be 'auto' or a fraction in (0, 0.5], got {value!r}")
    return float(value)


def flag_rows(scores: np.ndarray, fraction: float | None) -> tuple[np.ndarray, str]:
    """The rows to flag (the highest scores) and the criterion in words."""
    n = len(scores)
    if fraction is not None:
        count, criterion = round(fraction * n), f"the {fraction:.1%} of rows the goal asked for"
    else:
        q1, q3 = np.percentile(scores, [25, 75])
        beyond = int((scores > q3 + 1.5 * (q3 - q1)).sum())
        low, high = (max(1, round(share * n)) for share in AUTO_SHARE)
        count = min(max(beyond, low), high)
        criterion = (f"scores beyond the upper fence of all scores (third quartile + 1.5 x interquartile range: "
                     f"{beyond} rows), kept between {AUTO_SHARE[0]:.0%} and {AUTO_SHARE[1]:.0%} of the rows")
    flags = np.zeros(n, dtype=bool)
    flags[np.argsort(-scores, kind="stable")[:max(1, count)]] = True
    return flags, criterion


def _capped(flags: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, str]:
    """A method's own flags, limited to the most anomalous ``AUTO_SHARE[1]`` of the rows."""
    most = max(1, round(AUTO_SHARE[1] * len(flags)))
    if flags.sum() <= most:
        return flags, "the method's own threshold"
    kept = np.zeros(len(flags), dtype=bool)
    kept[order[flags[order]][:most]] = True
    return kept, (f"the method's own threshold ({int(flags.sum())} rows), limited to the most anomalous "
                  f"{AUTO_SHARE[1]:.0%} of the rows")


def _robust_z(values: pd.Series, basis: pd.Series) -> pd.Series:
    """How many robust standard deviations (MAD, else mean absolute deviation) of ``basis`` each value lies from
    its median."""
    median = basis.median()
    spread = (basis - median).abs()
    scale = spread.median() * 1.4826 or spread.mean() * 1.2533
    deviation = (values - median).abs()
    return deviation / scale if scale else deviation * 0.0


def _rarity_z(values: pd.Series, basis: pd.Series) -> pd.Series:
    """A value's rarity on the scale of a normal z: a value held by a share p of ``basis`` rows scores the two-sided
    normal quantile of p, so a category seen in 1% of rows weighs like a measurement 2.6 standard deviations out
    (a value ``basis`` never holds counts as held by one row)."""
    from scipy.stats import norm

    shares = values.map(basis.value_counts(normalize=True)).fillna(1 / max(len(basis), 1))
    return pd.Series(norm.isf(shares.to_numpy(dtype=float) / 2), index=values.index)


def _describe(column: str, value: float, values: pd.Series, groups: dict[str, Indicator]) -> str:
    if column in groups:  # a category's value, held or not: "type = Condo", "type is not Residential"
        found = groups[column]
        said = f"{found.column} = {found.value}" if value == 1 else f"{found.column} is not {found.value}"
        return f"{said} (only {(values == value).mean():.1%} of rows)"
    if values.nunique() <= 2:
        return f"{column} = {readable_number(value)} (only {(values == value).mean():.1%} of rows)"
    low, high = values.quantile([0.25, 0.75])
    if low == high:
        return f"{column} = {readable_number(value)}, while most rows have {readable_number(low)}"
    side = "above" if value > values.median() else "below"
    return f"{column} = {readable_number(value)}, {side} the usual {readable_number(low)} to {readable_number(high)}"


def reasons(frame: pd.DataFrame, columns: list[str], rows: np.ndarray, basis: pd.DataFrame | None = None) -> list[str]:
    """For each of ``rows``, the features that make it unusual, most unusual first: judged against the rows of
    ``basis`` (the training rows, for new rows), else of ``frame`` itself."""
    numeric = frame[columns].astype(float)
    known = numeric if basis is None else basis[columns].astype(float)
    unusual = pd.DataFrame({c: (_rarity_z if known[c].nunique() <= 2 else _robust_z)(numeric[c], known[c])
                            for c in columns})
    groups = indicators(known, columns)
    described = []
    for row in rows:
        z = unusual.iloc[row].dropna().sort_values(ascending=False)
        z = z[z >= UNUSUAL_Z]
        once = z[~z.index.map(lambda c: groups[c].column if c in groups else c).duplicated()]  # a category once
        named = [_describe(c, numeric[c].iloc[row], known[c], groups) for c in once.index[:REASONS_PER_ROW]]
        described.append("; ".join(named) or "an unusual combination of ordinary values")
    return described


class AnomalyModel:
    """Scores new rows as a detector scored its training rows, and explains the flagged ones against a sample of
    those rows (``BASIS_ROWS``)."""

    def __init__(self, inputs: TableInput, score: Callable[[np.ndarray], np.ndarray], basis: pd.DataFrame):
        self.inputs, self.score_values, self.basis = inputs, score, basis

    def score(self, X: pd.DataFrame) -> np.ndarray:
        return np.asarray(self.score_values(self.inputs(X)), dtype=float)

    def why(self, X: pd.DataFrame, rows: np.ndarray) -> list[str]:
        return reasons(X.reset_index(drop=True), self.inputs.columns, rows, basis=self.basis)


def write_anomalies(out: Bundle, frame: pd.DataFrame, columns: list[str], scores: Any, title: str,
                    contamination: Any = "auto", metrics: dict[str, float] | None = None, *, flags: Any = None,
                    values: np.ndarray | None = None, score: Callable[[np.ndarray], np.ndarray] | None = None) -> dict:
    """Flag rows (the ``contamination`` fraction when given, else ``flags`` when the method decides itself, else the
    shared rule), explain the flagged ones and write ``anomaly_score``, ``is_anomaly``, ``anomaly_rank`` and ``why``
    per row, the counts and a report.

    ``score`` scores new rows' ``values`` (as ``data_matrix`` gave them) the way ``scores`` were made: it is saved
    with the lowest flagged score as the threshold new rows are flagged by. Without it (a method that scores only
    the rows it was fitted on), ``model.json`` says new rows cannot be scored."""
    scores = np.asarray(scores, dtype=float)
    order = np.argsort(-scores, kind="stable")
    fraction = fraction_of(contamination)
    if flags is None or fraction is not None:
        flags, criterion = flag_rows(scores, fraction)
    else:
        flags, criterion = _capped(np.asarray(flags, dtype=bool), order)
    rank = np.empty(len(scores), dtype=int)
    rank[order] = np.arange(1, len(scores) + 1)
    flagged = order[flags[order]]
    why = np.full(len(scores), "", dtype=object)
    why[flagged] = reasons(frame, columns, flagged)
    basis = frame[columns].sample(min(len(frame), BASIS_ROWS), random_state=0)
    lowest_flagged = scores[flags].min() if flags.any() else np.nextafter(scores.max(), np.inf)  # none: above all
    save_row_model(out, "anomaly", frame, columns, values,
                   None if score is None or values is None else lambda inputs: AnomalyModel(inputs, score, basis),
                   {"anomaly_threshold": float(lowest_flagged)})
    metrics = {"n_anomalies": int(flags.sum()), "anomaly_fraction": float(flags.mean()), **(metrics or {})}
    out.write_predictions(pd.DataFrame({"anomaly_score": scores, "is_anomaly": flags, "anomaly_rank": rank,
                                        "why": why}))
    out.write_metrics(metrics)
    listed = [f"{i + 1}. row {row + 1} (score {scores[row]:.3g}): {why[row]}"
              for i, row in enumerate(flagged[:REPORT_ROWS])]
    out.append_report(f"## {title}\n\n{metrics['n_anomalies']} of {len(scores)} rows flagged "
                      f"({metrics['anomaly_fraction']:.1%}) by {criterion}.\n\n"
                      + "\n".join(f"- {k}: {v:.4g}" for k, v in metrics.items())
                      + ("\n\nMost unusual rows (counted from 1) and why:\n\n" + "\n".join(listed) if listed else ""))
    return metrics
