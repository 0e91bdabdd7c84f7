"""Helpers shared by the data-cleaning microservices: loading the raw source, imputing, choosing columns.

Kept here once so the loaders, the imputers and the outlier services stay small and agree with each other.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dagsmith_kit.bundle import Bundle
from dagsmith_kit.service import ServiceError, transform_tables


# ---------------------------------------------------------------- splitting
def time_values(values: pd.Series) -> pd.Series:
    """A time column's values in an order that sorts by time: numbers and datetimes as they are, anything else
    parsed as dates (NaT where a value is not one)."""
    if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_datetime64_any_dtype(values):
        return values
    return pd.to_datetime(values.astype(object), errors="coerce", format="mixed")


def steps_per_unit(times: pd.Series) -> int | None:
    """How many evenly spaced steps make one unit of a numeric time in fractions of a unit (12 for monthly decimal
    years: 1991.0, 1991.083, ...), or None (whole numbers, uneven steps)."""
    values = np.sort(times.dropna().unique())
    if len(values) < 3 or np.all(values == np.round(values)):
        return None
    step = float(np.median(np.diff(values)))
    steps = round(1 / step) if step > 0 else 0
    return steps if 2 <= steps <= 366 and abs(steps * step - 1) < 0.02 else None


def cycle_position(times: pd.Series, steps: int) -> pd.Series:
    """Where each time of a fractional numeric time falls in its unit's cycle of ``steps`` (0 to steps - 1: the month
    of a monthly decimal year), as ``steps_per_unit`` counts them."""
    return np.round((times - np.floor(times)) * steps) % steps


def repeats(key: pd.Series) -> bool:
    """Whether a key can decide anything: its values repeat (most rows share theirs with another); a key of values
    nearly all different would decide every column."""
    present = key.dropna()
    return len(present) > 1 and present.nunique() <= len(present) / 2


def decided_by(key: pd.Series, values: pd.Series) -> dict | None:
    """The value each of ``key``'s values comes with, when every one comes with one value of the column (missing ones
    aside): what a forecast knows of the column ahead from the key (a weekday's name from the weekday); else None."""
    pairs = pd.DataFrame({"key": key.to_numpy(), "value": values.to_numpy()}).dropna()
    grouped = pairs.groupby("key")["value"]
    return grouped.first().to_dict() if len(pairs) and (grouped.nunique() <= 1).all() else None


def season_features(name: str, times: pd.Series, steps: int) -> dict[str, pd.Series]:
    """A fractional numeric time's position in its cycle of ``steps`` as a number and as a sine and cosine (named
    ``<name>_season``, ``_sin``, ``_cos``), so that a linear model can follow a seasonal pattern too."""
    position = cycle_position(times, steps).astype(float)
    angle = 2 * np.pi * position / steps
    return {f"{name}_season": position, f"{name}_season_sin": np.sin(angle), f"{name}_season_cos": np.cos(angle)}


def labelled_data(inp: Bundle, out: Bundle) -> pd.DataFrame:
    """The ``data`` table without the rows whose target is missing: they can be neither learned from nor scored.

    How many were left out goes to the metrics (``rows_without_target``) and the report. Tables of bundles with no
    target are returned whole.
    """
    data = inp.table("data")
    if not inp.target or inp.target not in data.columns:
        return data
    missing = data[inp.target].isna()
    if missing.all():
        raise ServiceError(f"every value of the target '{inp.target}' is missing; there is nothing to learn from")
    out.write_metrics({"rows_without_target": int(missing.sum())})
    if missing.any():
        out.append_report(f"{int(missing.sum())} rows without a value of '{inp.target}' were left out of both sets.")
    return data[~missing]


def rows_to_split(inp: Bundle, out: Bundle, test_size: float, column: tuple[str, str | None] | None = None
                  ) -> pd.DataFrame:
    """The rows a splitter divides (``labelled_data``), after the checks every splitter makes: ``test_size`` is a
    fraction, the bundle is not split yet and, for a splitter by a column, ``column`` (its role, e.g. "time", and
    its name) names one of the table's columns."""
    if not 0.0 < test_size < 1.0:
        raise ServiceError(f"test_size must be between 0 and 1, got {test_size}")
    if inp.is_split():
        raise ServiceError("the data is already split into train and test")
    role, name = column or ("", None)
    if column and not name:
        raise ServiceError(f"no {role} column: set {role}_column (the bundle names none either)")
    data = labelled_data(inp, out)
    if name and name not in data.columns:
        raise ServiceError(f"the {role} column '{name}' is not in the table")
    return data


# ---------------------------------------------------------------- loaders
def require_source(inp: Bundle) -> Path:
    """The raw ``source.<ext>`` file of the bundle; a clear error when there is none."""
    source = inp.source_file()
    if source is None or not source.is_file():
        raise ServiceError("the bundle holds no raw source file (source.<ext>) to load")
    return source


def write_loaded(inp: Bundle, out: Bundle, frame: pd.DataFrame, source_name: str) -> None:
    """Check a freshly loaded table and write it as ``data.parquet``."""
    if frame.empty or frame.shape[1] == 0:
        raise ServiceError(f"{source_name} holds no rows or no columns")
    frame.columns = [str(c).strip() for c in frame.columns]
    if frame.columns.duplicated().any():
        duplicated = sorted(set(frame.columns[frame.columns.duplicated()]))
        raise ServiceError(f"{source_name} has duplicated column names: {', '.join(duplicated)}")
    if inp.target and inp.target not in frame.columns:
        raise ServiceError(f"the target column '{inp.target}' is not among the columns of {source_name}: "
                           f"{', '.join(frame.columns[:20])}")
    out.write_table("data", frame)
    out.write_metrics({"n_rows": len(frame), "n_columns": frame.shape[1]})
    out.drop_source()


# ---------------------------------------------------------------- imputers
def impute_tables(inp: Bundle, out: Bundle, numeric_imputer: Any, fill_others: bool = True) -> dict[str, int]:
    """Impute numeric features with ``numeric_imputer`` (fitted on the training table) in every table.

    Other feature columns get their most frequent training value when ``fill_others`` is true and are
    left as they are otherwise. The target and id columns are never touched. Returns the number of
    values filled per table.
    """
    from sklearn.impute import SimpleImputer

    def fit(train: pd.DataFrame) -> dict[str, Any]:
        numeric = [c for c in inp.feature_columns(train, numeric=True) if train[c].notna().any()]
        other = [c for c in inp.feature_columns(train, numeric=False) if train[c].notna().any()]
        state: dict[str, Any] = {"numeric": numeric, "modes": {}}
        if numeric:
            state["imputer"] = numeric_imputer.fit(train[numeric].astype(float))
        if other and fill_others:
            modes = SimpleImputer(strategy="most_frequent").fit(train[other].astype(object)).statistics_
            state["modes"] = dict(zip(other, modes))
        return state

    def apply(frame: pd.DataFrame, state: dict[str, Any]) -> pd.DataFrame:
        frame = frame.copy()
        numeric = state["numeric"]
        if numeric and frame[numeric].isna().any().any():
            values = state["imputer"].transform(frame[numeric].astype(float))
            for i, column in enumerate(numeric):
                if frame[column].isna().any():
                    frame[column] = values[:, i].astype(float)
        if state["modes"]:
            frame = frame.fillna(state["modes"])
        return frame

    transform_tables(inp, out, fit, apply)
    counts = {name: int(frame.isna().sum().sum() - out.table(name).isna().sum().sum())
              for name, frame in inp.tables().items()}
    out.write_metrics({f"values_imputed_{name}": count for name, count in counts.items()})
    return counts


# ---------------------------------------------------------------- column filters
def checked_drop(inp: Bundle, train: pd.DataFrame, reasons: dict[str, str], what: str) -> dict[str, str]:
    """A column filter's decision ``{column: reason}``, after checking that some feature column survives it."""
    features = inp.feature_columns(train)
    if features and set(features) <= set(reasons):
        raise ServiceError(f"every feature column is {what}; dropping them all would leave nothing to model with")
    return reasons


def without_columns(frame: pd.DataFrame, reasons: dict[str, str]) -> pd.DataFrame:
    """``frame`` without the columns named in ``reasons``: the apply step of a column filter.

    A filter decides on the training table which columns go and passes this to ``transform_tables``,
    so every table loses the same columns.
    """
    return frame.drop(columns=list(reasons), errors="ignore")


def report_dropped_columns(out: Bundle, reasons: dict[str, str], title: str) -> None:
    """Record a column filter's decision: a ``columns_dropped`` metric and a report section naming each column."""
    out.write_metrics({"columns_dropped": len(reasons)})
    lines = "\n".join(f"- `{column}` ({why})" for column, why in reasons.items()) or "No column dropped."
    out.append_report(f"## {title}\n\n{lines}")



def drop_columns(inp: Bundle, out: Bundle, choose: Callable[[pd.DataFrame], dict[str, str]], what: str,
                 title: str) -> dict[str, str]:
    """A column filter's whole work: ``choose`` names the columns to drop with a reason each, from the training table;
    unless that would leave no feature column (each would be ``what``), every table loses them, and the metric and
    a report section under ``title`` name them. Returns ``{column: reason}``."""
    reasons = transform_tables(inp, out, lambda train: checked_drop(inp, train, choose(train), what), without_columns)
    report_dropped_columns(out, reasons, title)
    return reasons


# ---------------------------------------------------------------- outliers
def continuous_features(inp: Bundle, frame: pd.DataFrame) -> list[str]:
    """Numeric feature columns that are not boolean or binary (outlier rules make no sense for 0/1 flags)."""
    return [c for c in inp.feature_columns(frame, numeric=True)
            if not pd.api.types.is_bool_dtype(frame[c]) and frame[c].nunique() > 2]


def clip_tables(inp: Bundle, out: Bundle, fit: Callable[[pd.DataFrame], dict[str, tuple[float, float]]]
                ) -> dict[str, int]:
    """Clip every table's columns to the (low, high) bounds ``fit`` learns from the training table (missing values
    stay missing); returns how many values moved per column. The outlier clippers differ only in their ``fit``."""
    clipped: dict[str, int] = {}

    def apply(frame: pd.DataFrame, bounds: dict[str, tuple[float, float]]) -> pd.DataFrame:
        frame = frame.copy()
        for column, (low, high) in bounds.items():
            values = frame[column].astype(float)
            clipped[column] = clipped.get(column, 0) + int(((values < low) | (values > high)).sum())
            frame[column] = values.clip(low, high)
        return frame

    transform_tables(inp, out, fit, apply)
    return clipped


def clipped_lines(clipped: dict[str, int]) -> str:
    """The report's list of how many values a clipper moved per column."""
    return "\n".join(f"- `{c}`: {n} values clipped" for c, n in clipped.items() if n) or "No value was clipped."


# ---------------------------------------------------------------- validators
#: One check of a validator: its name, whether it passed, whether failing it stops the pipeline, and a detail.
Check = tuple[str, bool, bool, str]


def checks_table(checks: list[Check]) -> tuple[str, int]:
    """A validator's checks as a Markdown table (pass, FAIL for a blocking failure, else warning) and how many
    warnings there are."""
    rows = [f"| {name} | {'pass' if passed else ('FAIL' if blocking else 'warning')} | {detail} |"
            for name, passed, blocking, detail in checks]
    warnings = sum(not passed and not blocking for _, passed, blocking, _ in checks)
    return "\n".join(["| check | result | detail |", "|---|---|---|", *rows]), warnings


def stop_on_failed_checks(checks: list[Check], what: str) -> None:
    """Stop the pipeline with one line naming every blocking check that failed."""
    failed = [f"{name} ({detail})" for name, passed, blocking, detail in checks if blocking and not passed]
    if failed:
        raise ServiceError(f"{what} validation failed: " + "; ".join(failed))
