"""An answer too good to be true is doubted, not reported as a plain success.

A held-out score at or near perfect, or one feature carrying nearly all of the explanation, usually means a column
recorded with or after the outcome (a leak: ``tenure_band`` derived from ``tenure`` predicting ``has_contract``, itself
derived from it) or a target that is not the one meant. The run completes, marked as needing review, naming the
column that decides the target when one does: each column alone is scored on the training rows by a small tree fitted
on half of them (half of their groups, when the split kept groups apart) and scored on the other half, and one that
scores near perfect on rows it did not learn from decides the target. The held-out rows are never read for it. A
forecast's time is no such column: on shuffled rows it only interpolates between neighbours in time, which would decide
any smooth series, and a forecast is meant to learn from it; nor is its target's own past as known a horizon back. A
score near perfect that a trivial predictor matches (yesterday's value of a smooth series) is an easy task, not a doubt.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn import metrics as skm
from sklearn.model_selection import cross_val_predict
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from dagsmith.execution.quality import Quality
from dagsmith_kit import Bundle
from dagsmith_kit.folds import Folds, cross_folds, groups_of
from dagsmith_kit.metrics import label

#: A held-out ROC AUC or R² (macro F1 for a classifier without probabilities) at least this is too good to trust.
TOO_GOOD = 0.995
#: One feature carrying at least this share of the explanation's importance carries it nearly alone.
DOMINANT_SHARE = 0.9
#: A column alone scoring at least this (balanced accuracy, or R²) on rows it did not learn from decides the target.
DECIDES = 0.98
#: Training rows and columns the per-column check reads at most (the explanation's drivers first): seconds, not
#: minutes, on a large or wide table.
MAX_ROWS, MAX_COLUMNS = 20_000, 200
#: How deep the one-column tree may grow: enough for a band of values or a handful of categories, not to memorise.
DEPTH = 6
#: The score a doubt speaks of: the first of these the run's quality reports.
HEADLINE = ("roc_auc", "r2", "f1")


def review(quality: Quality, model: Bundle, columns: list[str], drivers: list[dict], *,
           classification: bool) -> str | None:
    """Why a valid result needs a person's review before it is trusted, or None when nothing is too good.

    ``model`` is the model step's output (its training rows), ``columns`` the table's columns as loaded (what the
    model's features were made from), ``drivers`` the explanation's ranked features.
    """
    target = model.require_target()
    key = next((key for key in HEADLINE if key in quality.metrics), None)
    name, score = (label(key), quality.metrics[key]) if key else (None, None)
    # a trivial predictor as good (a forecast of a smooth series from its value a horizon back) says the task is easy
    too_good = score is not None and score >= TOO_GOOD and quality.metrics.get(f"baseline_{key}", 0.0) < TOO_GOOD
    dominant = _dominant(drivers)
    if not too_good and dominant is None:
        return None
    column, alone = _deciding(model, columns, [d["feature"] for d in drivers], classification=classification)
    decides = column is not None and alone >= DECIDES
    if decides:
        seen = ([f"held-out {name} {score:.3f}"] if score is not None else []) + (
            [f"`{dominant}` carries nearly all of the explanation"] if dominant else [])
        measure = "balanced accuracy" if classification else "R²"
        return (f"`{column}` alone decides `{target}` ({measure} {alone:.3f} from that column alone on training rows "
                f"it did not learn from; {', '.join(seen)}): likely a leak (a column recorded with or after the "
                f"outcome) or the wrong target. Leave it out (--exclude {column}) or check the target.")
    if too_good:
        return (f"a held-out {name} of {score:.3f} is too good to take on trust, though no single column decides "
                f"`{target}` (an easy task can score this well too): check that no column is recorded with or after "
                f"the outcome, and that `{target}` is the column meant.")
    return None


def _dominant(drivers: list[dict]) -> str | None:
    """The feature that carries at least ``DOMINANT_SHARE`` of the explanation's importance, if one does."""
    total = sum(d["importance"] for d in drivers if d["importance"] > 0)
    top = max(drivers, key=lambda d: d["importance"], default=None)
    return top["feature"] if top and total > 0 and top["importance"] / total >= DOMINANT_SHARE else None


def origins(features: list[str], columns: list[str]) -> dict[str, list[str]]:
    """The model's features grouped by the loaded column each was made from: the column itself, or the longest column
    name it starts with followed by '_' (``tenure_band_new`` from ``tenure_band``, ``signup_year`` from ``signup``);
    a feature made from no one column stands alone."""
    grouped: dict[str, list[str]] = {}
    by_length = sorted(columns, key=len, reverse=True)
    for feature in features:
        origin = next((c for c in by_length if feature == c or feature.startswith(f"{c}_")), feature)
        grouped.setdefault(origin, []).append(feature)
    return grouped


def _deciding(model: Bundle, columns: list[str], first: list[str], *,
              classification: bool) -> tuple[str | None, float]:
    """The loaded column that alone predicts the target best on training rows it did not learn from, and its score;
    the columns the features ``first`` were made from are tried first."""
    train = model.table("train")
    y = train[model.require_target()]
    kept = y.notna() & (y.map(y.value_counts()) >= 2 if classification else True)  # a class needs a row in each half
    train, y = train[kept], y[kept]
    if len(train) > MAX_ROWS:
        train, y = train.sample(MAX_ROWS, random_state=0), y.sample(MAX_ROWS, random_state=0)
    if len(train) < 10 or (classification and y.nunique() < 2):
        return None, 0.0
    y = y.astype(str) if classification else y.astype(float)
    grouped = origins(model.feature_columns(train), columns)
    if model.forecasts:  # its time, and its own past as known a horizon back, are what a forecast learns from
        grouped.pop(model.time_column or "", None)
        past = set(model.meta.get("past_features") or [])
        grouped = {origin: kept for origin, features in grouped.items() if (kept := [f for f in features
                                                                                  if f not in past])}
    ahead = list(dict.fromkeys(origin for origin, features in grouped.items() if set(features) & set(first)))
    tried = (ahead + [origin for origin in grouped if origin not in ahead])[:MAX_COLUMNS]
    halves, _ = cross_folds(y, 2, 0, classification=classification, groups=groups_of(model, train))
    scored = {column: _alone(train[grouped[column]], y, halves, classification) for column in tried}
    best = max(scored, key=lambda column: scored[column], default=None)
    return best, scored[best] if best is not None else 0.0


def _alone(frame: pd.DataFrame, y: pd.Series, halves: Folds, classification: bool) -> float:
    """How well these features alone predict ``y``: a small tree fitted on one of the ``halves``, scored on the other
    and the other way round (balanced accuracy, or R²)."""
    x = np.column_stack([_numbers(frame[c]) for c in frame.columns])
    if classification:
        predicted = cross_val_predict(DecisionTreeClassifier(max_depth=DEPTH, random_state=0), x, y, cv=halves)
        return float(skm.balanced_accuracy_score(y, predicted))
    predicted = cross_val_predict(DecisionTreeRegressor(max_depth=DEPTH, random_state=0), x, y, cv=halves)
    return float(skm.r2_score(y, predicted))


def _numbers(values: pd.Series) -> np.ndarray:
    """A column as numbers a tree can split: categories by their codes, gaps below every value."""
    if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        return values.astype("category").cat.codes.to_numpy(dtype=float)  # a gap is code -1
    numbers = values.to_numpy(dtype=float)
    finite = numbers[np.isfinite(numbers)]
    return np.where(np.isfinite(numbers), numbers, (finite.min() - 1) if finite.size else 0.0)
