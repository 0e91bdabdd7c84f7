"""Helpers shared by the model services: input checks, native categorical handling, short reports.

Unlike the rest of dagsmith_kit this module needs scikit-learn; only model services import it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.pipeline import Pipeline

from dagsmith_kit.bundle import Bundle
from dagsmith_kit.service import ServiceError, Step
from dagsmith_kit.supervised import tune_fit_and_predict


def require_split(inp: Bundle) -> str:
    """The target name, after checking that the bundle has been split into train and test."""
    target = inp.require_target()
    if not inp.is_split():
        raise ServiceError("this model needs train and test tables; run a train/test splitter first")
    return target


def numeric_features(inp: Bundle, *, regression: bool = False, allow_missing: bool = False) -> list[str]:
    """The feature columns, after checking they are all numeric and have no missing values.

    ``regression=True`` also checks that the target is numeric. ``allow_missing=True`` lets missing values
    through, for models that handle NaN natively but not text columns.
    """
    features = native_features(inp, regression=regression)
    train, test = inp.table("train"), inp.table("test")
    text = inp.feature_columns(train, numeric=False)
    if text:
        raise ServiceError(f"this model needs numeric features; encode these columns first: {', '.join(text[:10])}")
    missing = [c for c in features if train[c].isna().any() or test[c].isna().any()]
    if missing and not allow_missing:
        raise ServiceError(f"this model cannot handle missing values; impute these columns first: "
                           f"{', '.join(missing[:10])}")
    return features


def native_features(inp: Bundle, *, regression: bool = False) -> list[str]:
    """The feature columns for models that handle missing values and categories themselves.

    Checks the split, that there are features, that the target is complete (and numeric for ``regression``). A
    column with no value in any training row is left out: nothing can be learnt from it, and histogram boosting
    cannot bin it (a measurement taken only where the target is not, such as a dose on the rows between the
    concentrations it explains).
    """
    target = require_split(inp)
    train = inp.table("train")
    features = [c for c in inp.feature_columns(train) if train[c].notna().any()]
    if not features:
        raise ServiceError("the training table has no feature columns with values")
    if train[target].isna().any():
        raise ServiceError(f"the target '{target}' has missing values in the training table")
    if regression and not pd.api.types.is_numeric_dtype(train[target]):
        raise ServiceError(f"regression needs a numeric target, but '{target}' is {train[target].dtype}")
    return features


class CategoryDtypes(TransformerMixin, BaseEstimator):
    """A scikit-learn transformer that turns non-numeric columns into pandas ``category`` columns.

    The categories are learned from the training table. A column with more than ``max_categories`` (native
    categorical support allows no more) keeps its most frequent ones, so a job title or a town still informs the
    model; its rarer values, and values unseen in training, become missing, which histogram gradient boosting
    handles natively. ``rare_`` says how many values each such column lost.
    """

    def __init__(self, max_categories: int = 255):
        self.max_categories = max_categories

    def fit(self, X: pd.DataFrame, y: Any = None) -> CategoryDtypes:
        self.categories_, self.rare_ = {}, {}
        for column in X.columns:
            if not pd.api.types.is_numeric_dtype(X[column]):
                counts = X[column].dropna().astype("string").value_counts()
                if len(counts) > self.max_categories:
                    self.rare_[column] = len(counts) - self.max_categories
                    counts = counts.sort_index().sort_values(ascending=False, kind="stable")[: self.max_categories]
                self.categories_[column] = sorted(counts.index)
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        X = X.copy()
        for column, categories in self.categories_.items():
            values = X[column].astype("string")
            X[column] = pd.Categorical(values.where(values.isin(categories)), categories=categories)
        return X


def with_native_categories(estimator: Any) -> Any:
    """``estimator`` preceded by :class:`CategoryDtypes`, for models with ``categorical_features="from_dtype"``."""
    return Pipeline([("categories", CategoryDtypes()), ("model", estimator)])


def native_categories_note(model: Pipeline) -> str:
    """The report's sentence on the categorical features a :func:`with_native_categories` model used, and on the
    rare values of any column with more categories than native support allows."""
    categories = model.named_steps["categories"]
    rare = "".join(f"; '{column}' keeps its {categories.max_categories} commonest values and its {count} rarer ones "
                   f"count as missing" for column, count in categories.rare_.items())
    return f"Categorical features used natively: {', '.join(categories.categories_) or 'none'}{rare}."


def hist_boosting_summary(model: Pipeline, detail: str = "") -> tuple[int, str]:
    """A fitted :func:`with_native_categories` histogram gradient boosting model's iterations, and the report's
    sentences on them (with ``detail`` in brackets) and on its categorical features."""
    iterations = int(model.named_steps["model"].n_iter_)
    detail = f" ({detail})" if detail else ""
    return iterations, f"{iterations} boosting iterations{detail}. " + native_categories_note(model)


#: Categories a linear model's one-hot encoding keeps per column; rarer values share one column.
LINEAR_MAX_CATEGORIES = 30


def with_linear_inputs(estimator: Any) -> Pipeline:
    """``estimator`` preceded by what a linear model needs of a raw table, learned on the rows it is fitted on:
    numbers standardised, with their gaps filled by the median and flagged (a gap can mean something), and text
    columns one-hot encoded, a gap being a category of its own. Such a model reads the table as loaded, so it can
    race the tree models that read it so too, whose errors it rarely shares."""
    from sklearn.compose import ColumnTransformer, make_column_selector
    from sklearn.impute import SimpleImputer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    numbers = Pipeline([("fill", SimpleImputer(strategy="median", add_indicator=True)), ("scale", StandardScaler())])
    categories = Pipeline([("text", TextCategories()), ("onehot", OneHotEncoder(
        handle_unknown="infrequent_if_exist", max_categories=LINEAR_MAX_CATEGORIES, sparse_output=False))])
    prepare = ColumnTransformer([("numbers", numbers, make_column_selector(dtype_include="number")),
                                 ("categories", categories, make_column_selector(dtype_exclude="number"))],
                                verbose_feature_names_out=False)
    return Pipeline([("prepare", prepare), ("model", estimator)])


class TextCategories(TransformerMixin, BaseEstimator):
    """Non-numeric columns as plain text for one-hot encoding, a gap as the category ``(missing)``."""

    def fit(self, X: pd.DataFrame, y: Any = None) -> TextCategories:
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        return X.astype("string").fillna("(missing)").astype(object)

    def get_feature_names_out(self, input_features: Any = None) -> Any:
        return input_features


def linear_coefficients(model: Pipeline, weights: Any) -> str:
    """The report's list of a :func:`with_linear_inputs` model's largest ``weights``, named by encoded column."""
    return ranked(list(model.named_steps["prepare"].get_feature_names_out()), weights)


def ranked(names: list[str], weights: Any, top: int = 10) -> str:
    """A Markdown list of the ``top`` features by absolute weight (coefficients or importances)."""
    pairs = sorted(zip(names, [float(w) for w in weights]), key=lambda p: abs(p[1]), reverse=True)[:top]
    return "\n".join(f"- {name}: {weight:+.4g}" for name, weight in pairs)


#: Characters LightGBM refuses in feature names (it writes them into JSON).
LIGHTGBM_REFUSED = set('[]{}":,')


def lightgbm_features(inp: Bundle, *, regression: bool = False) -> list[str]:
    """The feature columns for a LightGBM model, after checking LightGBM accepts their names."""
    features = native_features(inp, regression=regression)
    awkward = [c for c in features if set(c) & LIGHTGBM_REFUSED]
    if awkward:
        raise ServiceError("LightGBM refuses feature names with JSON characters ([ ] { } \" : ,); rename these "
                           f"columns first: {', '.join(awkward[:10])}")
    return features


#: LightGBM's settings with the least each may be (LightGBM stops on smaller ones with an internal error).
LIGHTGBM_MINIMUMS = {"n_estimators": 1, "num_leaves": 2, "min_child_samples": 0, "learning_rate": 1e-9,
                     "colsample_bytree": 1e-9, "reg_lambda": 0.0, "max_bin": 2}


def lightgbm_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """A LightGBM model's keyword arguments from the settings a service declares, each checked against the least it
    may be (``colsample_bytree`` is a fraction, at most 1), with gain as the importance and no training log."""
    for name, least in LIGHTGBM_MINIMUMS.items():
        if name in settings and settings[name] < least:
            raise ServiceError(f"{name} must be at least {least:g}, got {settings[name]}")
    if settings.get("colsample_bytree", 1.0) > 1.0:
        raise ServiceError("colsample_bytree is a fraction of the features, at most 1, "
                           f"got {settings['colsample_bytree']}")
    return {**settings, "importance_type": "gain", "verbose": -1}


def lightgbm_summary(model: Pipeline, features: list[str], detail: str = "") -> tuple[int, str]:
    """A fitted :func:`with_native_categories` LightGBM model's boosting rounds, and the report's sentences on them
    (with ``detail`` in brackets), its categorical features and its largest gains."""
    fitted = model.named_steps["model"]
    rounds = int(fitted.n_estimators_)
    detail = f" ({detail})" if detail else ""
    return rounds, (f"{rounds} boosting rounds{detail}. {native_categories_note(model)} Largest gains:\n"
                    + ranked(features, fitted.feature_importances_, top=5))


def lightgbm_space(trial: Any) -> dict[str, Any]:
    """The LightGBM hyperparameters worth searching (an Optuna trial's suggestions, see ``dagsmith_kit.search``).
    Small noisy tables are often fitted best by many shallow trees under a strong L2 penalty (4 leaves, a penalty
    in the hundreds), small smooth ones by leaves of a few rows over coarse bins, so the ranges reach there."""
    return {"n_estimators": trial.suggest_int("n_estimators", 50, 600, log=True),
            "learning_rate": trial.suggest_float("learning_rate", 0.01, 0.3, log=True),
            "num_leaves": trial.suggest_int("num_leaves", 4, 128, log=True),
            "min_child_samples": trial.suggest_int("min_child_samples", 2, 100, log=True),
            "colsample_bytree": trial.suggest_float("colsample_bytree", 0.5, 1.0),
            "reg_lambda": trial.suggest_float("reg_lambda", 1e-3, 300.0, log=True),
            "max_bin": trial.suggest_categorical("max_bin", [31, 63, 255])}


def forest_space(trial: Any) -> dict[str, Any]:
    """The random and extra trees forests' hyperparameters worth searching."""
    return {"min_samples_leaf": trial.suggest_int("min_samples_leaf", 1, 20, log=True),
            "max_features": trial.suggest_categorical("max_features", ["sqrt", 0.5, 1.0]),
            "max_depth": trial.suggest_categorical("max_depth", [None, 8, 16])}


def forest_step(forest: Callable[[dict[str, Any]], Any], title: str, *, regression: bool = False) -> Step:
    """The step of a random or extra trees service, which declares its parameters in ``forest(params)``: on numeric,
    complete features, fit the forest it builds (tuned over :func:`forest_space` under a model search), predict the
    test table and report the most important features under ``title``."""

    def train(inp: Bundle, out: Bundle, params: dict[str, Any]) -> None:
        features = numeric_features(inp, regression=regression)
        model, features = tune_fit_and_predict(inp, out, forest, params, features, space=forest_space)
        out.append_report(f"## {title}\n\nMost important features:\n"
                          + ranked(features, model.feature_importances_, top=5))

    return train
