"""Blending a search's candidates from their out-of-fold predictions: judged as the candidates are, kept only when
it beats the best alone, and never trusting a candidate's files."""

from __future__ import annotations

import json

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone, is_classifier
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import cross_val_score

from dagsmith.execution.blending import choose, out_of_fold
from dagsmith_kit.bundle import ENSEMBLE_FILE, MEMBERS_DIR, MODEL_FILE, Bundle
from dagsmith_kit.search import SCORERS, SEARCH_FILE, VALIDATION_FILE, _scorer, score_predictions


def _predictions(model, X: pd.DataFrame) -> pd.DataFrame:
    frame = pd.DataFrame({"prediction": model.predict(X)})
    if hasattr(model, "classes_"):
        for i, label in enumerate(model.classes_):
            frame[f"proba_{label}"] = model.predict_proba(X)[:, i]
    return frame


def _numbered_wine(**kwargs):
    """The wine cultivars numbered 2, 10 and 11: a model's class order that is not their order as text."""
    X, y = load_wine(**kwargs)
    return X, y.map({0: 2, 1: 10, 2: 11})


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # a weak model: scores below 1
@pytest.mark.parametrize("load, model, metrics", [
    (load_breast_cancer, LogisticRegression(max_iter=50),
     ["roc_auc", "log_loss", "accuracy", "balanced_accuracy", "f1", "recall", "precision", "f1_macro"]),
    (load_wine, LogisticRegression(max_iter=30), ["roc_auc", "accuracy", "f1_macro", "f1"]),
    (_numbered_wine, LogisticRegression(max_iter=30), ["roc_auc", "log_loss", "accuracy", "f1_macro"]),
    (load_diabetes, LinearRegression(), ["r2", "rmse", "mae", "mape"]),
])
def test_predictions_are_judged_as_the_search_judges_models(load, model, metrics):
    X, y = load(return_X_y=True, as_frame=True)
    model.fit(X, y)
    for metric in metrics:
        expected = _scorer(metric, y)(model, X, y)
        assert score_predictions(metric, y, _predictions(model, X)) == pytest.approx(expected, rel=1e-6), metric
    assert set(metrics) <= set(SCORERS)


def _frame(values: np.ndarray, rows=None) -> pd.DataFrame:
    return pd.DataFrame({"prediction": values}, index=pd.Index(rows if rows is not None else range(len(values))))


def test_a_blend_is_kept_only_when_it_beats_the_best_alone():
    rng = np.random.default_rng(0)
    truth = pd.Series(rng.normal(size=400))
    half_a, half_b = rng.normal(0, 0.8, 400), rng.normal(0, 0.8, 400)
    blended = choose("r2", truth, {"a": _frame(truth + half_a), "b": _frame(truth + half_b)})
    assert blended is not None and set(blended.weights) == {"a", "b"}  # independent errors average out
    assert blended.score > blended.best_score and sum(blended.weights.values()) == pytest.approx(1)
    assert "against" in blended.describe("r2")
    assert choose("r2", truth, {"good": _frame(truth + half_a * 0.1), "poor": _frame(truth + half_b * 3)}) is None
    assert choose("r2", truth, {"alone": _frame(truth + half_a)}) is None


def test_candidates_scored_on_different_columns_are_not_blended():
    truth = pd.Series(["yes", "no"] * 50)
    probabilities = pd.DataFrame({"prediction": truth, "proba_no": 0.4, "proba_yes": 0.6})
    labels_only = pd.DataFrame({"prediction": truth})
    assert choose("accuracy", truth, {"a": probabilities, "b": labels_only}) is None


@pytest.mark.parametrize("broken", [
    pd.DataFrame({"row": [0, 1, 99], "prediction": [1.0, 2.0, 3.0]}),  # a row the training table lacks
    pd.DataFrame({"row": [0, 0, 1], "prediction": [1.0, 2.0, 3.0]}),  # a row twice
    pd.DataFrame({"row": [0, 1, 2], "prediction": [1.0, np.nan, 3.0]}),
    pd.DataFrame({"row": [0, 1, 2], "prediction": ["a", "b", "c"]}),
    pd.DataFrame({"prediction": [1.0, 2.0, 3.0]}),
])
def test_a_candidates_malformed_predictions_keep_it_out_of_the_blend(tmp_path, broken):
    (tmp_path / MODEL_FILE).write_bytes(b"")
    (tmp_path / SEARCH_FILE).write_text(json.dumps({"features": ["x"]}))
    broken.to_parquet(tmp_path / VALIDATION_FILE)
    assert out_of_fold(tmp_path, rows=10) is None
    pd.DataFrame({"row": [2, 0, 1], "prediction": [3.0, 1.0, 2.0]}).to_parquet(tmp_path / VALIDATION_FILE)
    assert list(out_of_fold(tmp_path, rows=10)["prediction"]) == [1.0, 2.0, 3.0]
    (tmp_path / SEARCH_FILE).write_text(json.dumps({"features": "x"}))
    assert out_of_fold(tmp_path, rows=10) is None, "a member needs the feature columns it was trained on"


def test_a_later_model_replaces_the_blend_it_read(tmp_path):
    bundle = Bundle.create(tmp_path / "b", pd.DataFrame({"x": [1.0, 2.0], "y": [0, 1]}), target="y")
    (bundle.path / ENSEMBLE_FILE).write_text("{}")
    (bundle.path / MEMBERS_DIR).mkdir()
    bundle.save_model(LinearRegression())
    assert isinstance(bundle.load_model(), LinearRegression)
    assert not (bundle.path / ENSEMBLE_FILE).exists() and not (bundle.path / MEMBERS_DIR).exists()


def test_the_next_step_loads_the_blend_as_an_estimator(tmp_path):
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    y = y.map({0: "malignant", 1: "benign"})
    narrow, wide = list(X.columns[:5]), list(X.columns)
    first, second = LogisticRegression(max_iter=5000).fit(X[narrow], y), RandomForestClassifier(20).fit(X, y)
    bundle = Bundle.create(tmp_path / "b", X.assign(diagnosis=y), target="diagnosis")
    (bundle.path / MEMBERS_DIR).mkdir()
    for name, model in (("first", first), ("second", second)):
        joblib.dump(model, bundle.path / MEMBERS_DIR / f"{name}.joblib")
    (bundle.path / ENSEMBLE_FILE).write_text(json.dumps({"kind": "classifier", "members": [
        {"model": "members/first.joblib", "features": narrow, "weight": 0.25},
        {"model": "members/second.joblib", "features": wide, "weight": 0.75}]}))
    blend = bundle.load_model()
    expected = 0.25 * first.predict_proba(X[narrow]) + 0.75 * second.predict_proba(X)
    assert np.allclose(blend.predict_proba(X), expected) and list(blend.feature_names_in_) == wide
    assert is_classifier(blend) and set(blend.predict(X)) == {"malignant", "benign"}
    assert cross_val_score(clone(blend), X, y, cv=2, scoring="roc_auc").min() > 0.9, "refitting refits every member"
