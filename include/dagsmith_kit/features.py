"""What the feature services (encoders, scalers, selectors, expansions) share.

``fit_replace`` fits a scikit-learn transformer on the feature columns of the training table and puts its
output columns back in place of its input columns in every table; ``require_complete`` refuses missing values.
Both only take estimator objects, so this module needs pandas and numpy only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from dagsmith_kit.bundle import Bundle
from dagsmith_kit.service import ServiceError


def feature_subset(inp: Bundle, frame: pd.DataFrame, *, numeric: bool) -> list[str]:
    """The numeric (or non-numeric) feature columns of ``frame``; a clear error when there are none."""
    columns = inp.feature_columns(frame, numeric=numeric)
    if not columns:
        kind = "numeric" if numeric else "categorical (non-numeric)"
        raise ServiceError(f"the table has no {kind} feature columns for this step to work on")
    return columns


def require_complete(inp: Bundle, columns: list[str], why: str) -> None:
    """Raise ``ServiceError`` when any of ``columns`` holds missing values in any table."""
    for name, frame in inp.tables().items():
        missing = [c for c in columns if frame[c].isna().any()]
        if missing:
            raise ServiceError(
                f"{why}, but the {name} table has missing values in {', '.join(missing[:5])}"
                + (f" and {len(missing) - 5} more" if len(missing) > 5 else "") + "; impute them first"
            )


def _replace(frame: pd.DataFrame, columns: list[str], values: Any, names: list[str]) -> pd.DataFrame:
    produced = pd.DataFrame(np.asarray(values), columns=names, index=frame.index)
    if set(names) <= set(columns):  # same columns (scalers) or a subset (selectors): keep the column order
        result = frame[[c for c in frame.columns if c not in columns or c in names]].copy()
        for column in names:
            result[column] = produced[column]
        return result
    clash = sorted(set(names) & (set(frame.columns) - set(columns)))
    if clash:
        raise ServiceError(f"new columns would overwrite existing columns: {', '.join(clash[:5])}")
    return pd.concat([frame.drop(columns=columns), produced], axis=1)


def fit_replace(
    inp: Bundle, out: Bundle, estimator: Any, *, numeric: bool, columns: list[str] | None = None,
    use_target: bool = False,
) -> list[str]:
    """Fit ``estimator`` on the training table's feature columns and replace them by its output everywhere.

    ``numeric`` picks the numeric (True) or the other (False) feature columns unless ``columns`` are given.
    The output columns are named by ``get_feature_names_out()``. The training table gets the output of
    ``fit_transform`` (so cross-fitting encoders such as TargetEncoder encode it out-of-fold), every other
    table gets ``transform``. ``use_target`` passes the target to ``fit``. Returns the output column names.
    """
    train = inp.fit_table()
    columns = columns or feature_subset(inp, train, numeric=numeric)
    target = train[inp.require_target()] if use_target else None
    fitted = estimator.fit_transform(train[columns], target)
    names = [str(name) for name in estimator.get_feature_names_out()]
    fit_name = "train" if inp.is_split() else "data"
    for name, frame in inp.tables().items():
        values = fitted if name == fit_name else estimator.transform(frame[columns])
        out.write_table(name, _replace(frame, columns, values, names))
    return names
