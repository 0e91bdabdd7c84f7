"""Has the data a model scores moved away from the data it was trained on? A per-column check by population stability.

``reference`` describes the training rows once, as plain JSON (it is stored in a model version's ``reference.json``):
numeric columns by their decile bins, other columns by their category shares. ``compare`` places new rows in the
same bins and computes the population stability index (PSI): sum of (new share - old share) x ln(new / old) over
the bins. Below 0.1 is usually read as stable, 0.1 to 0.2 as a moderate shift, 0.2 and above as a real one. With
few new rows the PSI is noisy (about bins / rows even without drift), which ``rows`` in the result lets a reader
weigh.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

#: PSI at or above which a column counts as drifted.
THRESHOLD = 0.2
#: categories kept by name in a reference; rarer ones are pooled as one "other" share.
MAX_CATEGORIES = 50
#: a share never counts as smaller than this in the PSI (an empty bin would make it infinite).
FLOOR = 1e-4


def _is_numeric(values: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)


def _numbers(values: pd.Series) -> pd.Series:
    if pd.api.types.is_datetime64_any_dtype(values):  # seconds since 1970, whatever the unit the table keeps
        stamps = pd.to_datetime(values, utc=True)
        return (stamps - pd.Timestamp(0, tz="UTC")).dt.total_seconds()
    return pd.to_numeric(values, errors="coerce").astype("float64")


def _shares(counts: np.ndarray) -> list[float]:
    total = counts.sum()
    return (counts / total).tolist() if total else [0.0] * len(counts)


def _bin_counts(values: pd.Series, edges: list[float]) -> np.ndarray:
    """How many values fall in each bin ``(-inf, e1], (e1, e2], ..., (e_k, inf)``."""
    return np.bincount(np.searchsorted(np.asarray(edges), values.to_numpy(), side="left"), minlength=len(edges) + 1)


def reference(frame: pd.DataFrame, columns: list[str]) -> dict[str, Any]:
    """Each column's distribution in ``frame``: JSON-able, what ``compare`` measures new rows against."""
    described: dict[str, Any] = {}
    for column in columns:
        values = frame[column]
        missing = float(values.isna().mean()) if len(values) else 0.0
        if _is_numeric(values) or pd.api.types.is_datetime64_any_dtype(values):
            numbers = _numbers(values).dropna()
            numbers = numbers[np.isfinite(numbers)]
            edges = sorted(set(np.quantile(numbers, np.linspace(0.1, 0.9, 9)).tolist())) if len(numbers) else []
            described[column] = {"kind": "numeric", "edges": edges, "shares": _shares(_bin_counts(numbers, edges)),
                                 "missing": missing, "min": float(numbers.min()) if len(numbers) else None,
                                 "max": float(numbers.max()) if len(numbers) else None}
        else:
            counts = values.dropna().astype(str).value_counts()
            kept = counts.iloc[:MAX_CATEGORIES]
            other = int(counts.iloc[MAX_CATEGORIES:].sum())
            total = max(int(counts.sum()), 1)
            described[column] = {"kind": "categorical", "shares": {k: int(v) / total for k, v in kept.items()},
                                 "other": other / total, "missing": missing}
    return described


def psi(expected: list[float], actual: list[float]) -> float:
    """Population stability index of ``actual`` shares against ``expected`` ones (same bins)."""
    e = np.maximum(np.asarray(expected, dtype=float), FLOOR)
    a = np.maximum(np.asarray(actual, dtype=float), FLOOR)
    return float(np.sum((a - e) * np.log(a / e)))


def counts(ref: dict[str, Any], frame: pd.DataFrame) -> dict[str, Any]:
    """Per column of ``ref`` present in ``frame``: how many rows, missing values and values per bin or category.

    Counts add up over chunks (``add``), so a scorer reading new rows in chunks compares them all at once."""
    counted: dict[str, Any] = {}
    for column, described in ref.items():
        if column not in frame.columns:
            continue
        values = frame[column]
        if described["kind"] == "numeric":
            bins = _bin_counts(_numbers(values).dropna(), described["edges"])
        else:
            present = values.dropna().astype(str)
            tally = present.value_counts()
            listed = np.array([tally.get(k, 0) for k in described["shares"]], dtype=float)
            bins = np.append(listed, len(present) - listed.sum())
        counted[column] = {"rows": len(values), "missing": int(values.isna().sum()), "bins": bins.tolist()}
    return counted


def add(total: dict[str, Any], more: dict[str, Any]) -> dict[str, Any]:
    """Two ``counts`` of the same reference added up."""
    summed = dict(total)
    for column, c in more.items():
        if column in summed:
            t = summed[column]
            c = {"rows": t["rows"] + c["rows"], "missing": t["missing"] + c["missing"],
                 "bins": (np.asarray(t["bins"]) + np.asarray(c["bins"])).tolist()}
        summed[column] = c
    return summed


def judge(ref: dict[str, Any], counted: dict[str, Any], threshold: float = THRESHOLD) -> dict[str, Any]:
    """Per counted column: ``psi``, ``unseen_share`` (values in no category of the reference), ``missing_change``
    (new missing rate minus old) and ``drifted`` (PSI >= ``threshold``); plus the ``drifted`` column names."""
    columns: dict[str, Any] = {}
    for column, c in counted.items():
        described = ref[column]
        bins = np.asarray(c["bins"], dtype=float)
        result: dict[str, Any] = {"missing_change": (c["missing"] / c["rows"] if c["rows"] else 0.0)
                                  - described["missing"], "unseen_share": 0.0}
        if described["kind"] == "numeric":
            result["psi"] = psi(described["shares"], _shares(bins))
        else:
            result["psi"] = psi([*described["shares"].values(), described["other"]], _shares(bins))
            if not described["other"] and bins.sum():  # every training category is listed: the rest were never seen
                result["unseen_share"] = float(bins[-1] / bins.sum())
        result["drifted"] = bool(result["psi"] >= threshold)
        columns[column] = result
    rows = max((c["rows"] for c in counted.values()), default=0)
    return {"threshold": threshold, "rows": rows, "columns": columns,
            "drifted": [c for c, r in columns.items() if r["drifted"]]}


def compare(ref: dict[str, Any], frame: pd.DataFrame, threshold: float = THRESHOLD) -> dict[str, Any]:
    """``frame``'s columns against ``ref``: see ``judge``."""
    return judge(ref, counts(ref, frame), threshold)
