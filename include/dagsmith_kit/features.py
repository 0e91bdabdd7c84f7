"""What the feature services (encoders, scalers, selectors, expansions) share.

``fit_replace`` fits a scikit-learn transformer on the feature columns of the training table and puts its
output columns back in place of its input columns in every table; ``require_complete`` refuses missing values.
Both only take estimator objects, so this module needs pandas and numpy only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from dagsmith_kit import transforms
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


def numeric_only_features(inp: Bundle, service: str) -> list[str]:
    """The numeric feature columns of the training table, refusing any non-numeric feature."""
    train = inp.fit_table()
    text = inp.feature_columns(train, numeric=False)
    if text:
        raise ServiceError(f"{service} needs numeric features only; encode these columns first: {', '.join(text[:10])}")
    return feature_subset(inp, train, numeric=True)


def supervised_task(inp: Bundle, service: str) -> str:
    """``"classification"`` or ``"regression"``, from the bundle's task type; other tasks are refused."""
    task = inp.task_type or ""
    if inp.predicts_numbers:
        return "regression"
    if "classification" in task:
        return "classification"
    raise ServiceError(f"{service} needs a classification or regression task, not '{task or 'none'}'")


#: ``importance_getter`` for selectors wrapping :func:`linear_ranker`: the coefficients of its model step.
RANKER_IMPORTANCE = "named_steps.model.coef_"


def linear_ranker(task: str, *, l1: bool = False, C: float = 1.0, alpha: float | None = None,
                  random_state: int = 0) -> Any:
    """A linear model on standardised features whose coefficient sizes rank the features.

    Classification: logistic regression (L1 with ``l1``, strength ``C``). Regression: ridge, or with ``l1``
    the lasso (``alpha``, chosen by 5-fold cross-validation when None).
    """
    from sklearn.linear_model import Lasso, LassoCV, LogisticRegression, Ridge
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    if task == "classification":
        model = LogisticRegression(C=C, l1_ratio=1.0 if l1 else 0.0, solver="saga" if l1 else "lbfgs",
                                   max_iter=5000, random_state=random_state)
    elif l1:
        model = LassoCV(cv=5, random_state=random_state) if alpha is None else Lasso(alpha=alpha)
    else:
        model = Ridge(alpha=1.0 if alpha is None else alpha)
    return Pipeline([("scale", StandardScaler()), ("model", model)])


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


def replace_by_output(frame: pd.DataFrame, state: tuple[Any, list[str], list[str]]) -> pd.DataFrame:
    """The apply step of ``fit_replace``: a fitted estimator's ``transform`` in place of its input columns."""
    estimator, columns, names = state
    return _replace(frame, columns, estimator.transform(frame[columns]), names)


def fit_replace(
    inp: Bundle, out: Bundle, estimator: Any, *, numeric: bool, columns: list[str] | None = None,
    use_target: bool = False,
) -> list[str]:
    """Fit ``estimator`` on the training table's feature columns and replace them by its output everywhere.

    ``numeric`` picks the numeric (True) or the other (False) feature columns unless ``columns`` are given.
    The output columns are named by ``get_feature_names_out()``. The training table gets the output of
    ``fit_transform`` (so cross-fitting encoders such as TargetEncoder encode it out-of-fold), every other
    table gets ``transform`` (and so do new rows: the estimator is recorded, ``dagsmith_kit.transforms``).
    ``use_target`` passes the target to ``fit``. Returns the output column names.
    """
    train = inp.fit_table()
    columns = columns or feature_subset(inp, train, numeric=numeric)
    target = train[inp.require_target()] if use_target else None
    fitted = estimator.fit_transform(train[columns], target)
    names = [str(name) for name in estimator.get_feature_names_out()]
    fit_name = "train" if inp.is_split() else "data"
    state = (estimator, columns, names)
    for name, frame in inp.tables().items():
        out.write_table(name, _replace(frame, columns, fitted, names) if name == fit_name
                        else replace_by_output(frame, state))
    transforms.record(out, replace_by_output, state)
    return names
