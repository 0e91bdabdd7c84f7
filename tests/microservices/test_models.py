"""Model services (classifiers, regressors) and the regression evaluator, run on real datasets."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, roc_auc_score

from dagsmith import datasets
from dagsmith_kit import Bundle
from tests.microservices.conftest import assert_finite, split_bundle

PENGUIN_MEASURES = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]




@pytest.fixture
def penguins_numeric(tmp_path) -> Bundle:
    """penguins measurements only (rows with gaps dropped), split: multiclass, numeric, complete."""
    frame = datasets.load("penguins")[["species", *PENGUIN_MEASURES]].dropna()
    return split_bundle(tmp_path / "penguins_numeric", frame, "species", "multiclass_classification")


def check_classifier(out: Bundle, target: str) -> tuple[pd.DataFrame, float]:
    """Common checks of a classifier's output; returns the predictions and the test accuracy."""
    test, predictions = out.table("test"), out.predictions()
    assert len(predictions) == len(test)
    assert set(predictions["prediction"]) <= set(out.table("train")[target])
    proba = predictions[[f"proba_{label}" for label in sorted(set(out.table("train")[target]))]]
    assert_finite(proba.to_numpy())
    assert np.allclose(proba.sum(axis=1), 1.0) and (proba.to_numpy() >= 0).all()
    assert (out.path / "model.joblib").is_file()
    assert out.metrics()["train_rows"] == len(out.table("train"))
    return predictions, accuracy_score(test[target].astype(str), predictions["prediction"].astype(str))


# ---------------------------------------------------------------- classifiers on numeric data


@pytest.mark.parametrize("service, params", [
    ("logistic_regression", {"C": 1.0}),
    ("svm_classifier", {"C": 1.0, "kernel": "rbf"}),
    ("naive_bayes_classifier", {}),
])
def test_binary_classifiers_on_cancer(run, split, service, params):
    out = run(service, split, params).output
    predictions, accuracy = check_classifier(out, "diagnosis")
    malignant = out.table("test")["diagnosis"] == "malignant"
    assert accuracy > 0.9
    assert roc_auc_score(malignant, predictions["proba_malignant"]) > 0.95


@pytest.mark.parametrize("service, params", [
    ("logistic_regression", {"max_iter": 2000}),
    ("knn_classifier", {"n_neighbors": 7, "weights": "distance"}),
])
def test_multiclass_classifiers_on_penguins(run, penguins_numeric, service, params):
    out = run(service, penguins_numeric, params).output
    predictions, accuracy = check_classifier(out, "species")
    assert accuracy > 0.9  # the majority class is ~44%
    assert predictions["prediction"].nunique() == 3


def test_decision_tree_writes_tree_and_respects_depth(run, penguins_numeric):
    out = run("decision_tree_classifier", penguins_numeric,
              {"max_depth": 3, "min_samples_leaf": 5, "report_depth": 2}).output
    _, accuracy = check_classifier(out, "species")
    assert accuracy > 0.9
    metrics = out.metrics()
    assert metrics["tree_depth"] <= 3 and 2 <= metrics["tree_leaves"] <= 8
    assert isinstance(metrics["tree_leaves"], int)
    report = (out.path / "report.md").read_text()
    assert "## Decision tree" in report and "|---" in report
    assert any(f"{name} <=" in report for name in PENGUIN_MEASURES)
    assert "class: Adelie" in report


def test_svm_refuses_too_many_rows(run, split):
    result = run("svm_classifier", split, {"max_rows": 100}, ok=False)
    assert result.returncode == 2 and "max_rows is 100" in result.stderr


def test_numeric_models_explain_what_to_fix(run, churn, tmp_path):
    churn_split = run("train_test_splitter", churn, {"random_state": 0}).output
    result = run("svm_classifier", churn_split, ok=False)
    assert result.returncode == 2 and "encode these columns first" in result.stderr and "contract" in result.stderr
    frame = datasets.load("penguins")[["species", *PENGUIN_MEASURES]]  # 2 rows with gaps
    gappy = split_bundle(tmp_path / "gappy", frame, "species", "multiclass_classification")
    result = run("knn_classifier", gappy, ok=False)  # the gaps land in train or test: both are checked
    assert result.returncode == 2 and "impute these columns first" in result.stderr


# ---------------------------------------------------------------- gradient boosting with native categories


def test_gradient_boosting_classifier_on_raw_churn(run, churn):
    churn_split = run("train_test_splitter", churn, {"test_size": 0.3, "random_state": 0}).output
    assert churn_split.table("train")["total_charges"].isna().any()  # missing values, text columns: no preprocessing
    out = run("gradient_boosting_classifier", churn_split, {"max_iter": 150, "learning_rate": 0.05}).output
    predictions, accuracy = check_classifier(out, "churn")
    test = out.table("test")
    majority = test["churn"].value_counts(normalize=True).max()
    assert accuracy > majority + 0.02
    positive = [c for c in predictions if c.startswith("proba_")][-1].removeprefix("proba_")
    assert roc_auc_score(test["churn"].astype(str) == positive, predictions[f"proba_{positive}"]) > 0.78
    assert "contract" in (out.path / "report.md").read_text()
    assert 1 <= out.metrics()["boosting_iterations"] <= 150
    # the saved model learned the categories: an unseen category is treated as missing, not an error
    model, features = out.load_model(), [c for c in test.columns if c != "churn"]
    unseen = test[features].head(5).assign(contract="Ten-year", payment_method=None)
    assert model.predict_proba(unseen).shape == (5, 2)


def test_gradient_boosting_classifier_on_raw_penguins(run, penguins):
    raw_split = run("train_test_splitter", penguins, {"random_state": 0}).output
    out = run("gradient_boosting_classifier", raw_split).output
    _, accuracy = check_classifier(out, "species")
    assert accuracy > 0.93
    assert "island" in (out.path / "report.md").read_text()


# ---------------------------------------------------------------- regressors and the regression evaluator


@pytest.mark.parametrize("service, params, min_r2", [
    ("linear_regression", {}, 0.3),
    ("ridge_regression", {"alpha": 0.01}, 0.3),
    ("random_forest_regressor", {"n_estimators": 200, "min_samples_leaf": 5, "max_features": 0.5}, 0.2),
    ("gradient_boosting_regressor", {"max_iter": 200, "learning_rate": 0.03, "max_depth": 2}, 0.2),
    ("knn_regressor", {"n_neighbors": 15}, 0.2),
    ("svr_regressor", {"C": 1.0, "epsilon": 0.1}, 0.2),
])
def test_regressors_beat_the_mean_on_diabetes(run, regression_split, service, params, min_r2):
    out = run.chain(regression_split, (service, params), "regression_evaluator")
    predictions = out.predictions()
    assert list(predictions.columns) == ["prediction"] and len(predictions) == len(out.table("test"))
    assert_finite(predictions["prediction"])
    metrics = out.metrics()
    assert_finite([metrics[k] for k in ("rmse", "mae", "r2", "nrmse", "nmae", "baseline_rmse")])
    assert metrics["rmse"] < 0.9 * metrics["baseline_rmse"]  # diabetes is noisy: linear models reach R2 ~0.36
    assert metrics["r2"] > min_r2 and metrics["nrmse"] < 0.9 and 0 < metrics["nmae"] < metrics["nrmse"]
    assert [s["service"] for s in out.meta["lineage"]][-2:] == [service, "regression_evaluator"]
    assert "beats the mean-predictor baseline" in (out.path / "report.md").read_text()


def test_gradient_boosting_regressor_on_raw_penguins(run, tmp_path):
    """Predict body mass from raw penguins: text columns (species, island, sex) and gaps handled natively."""
    frame = datasets.load("penguins").dropna(subset=["body_mass_g"])
    mass_split = split_bundle(tmp_path / "mass", frame, "body_mass_g", "regression")
    assert mass_split.table("train")["sex"].isna().any()
    out = run.chain(mass_split, ("gradient_boosting_regressor", {"max_iter": 200}), "regression_evaluator")
    metrics = out.metrics()
    assert metrics["r2"] > 0.75 and metrics["rmse"] < 0.5 * metrics["baseline_rmse"]
    assert "species" in (out.path / "report.md").read_text()


@pytest.mark.parametrize("service", ["gradient_boosting_regressor", "ridge_regression"])
def test_regressors_leave_out_a_column_empty_on_every_training_row(run, tmp_path, service):
    """A measurement taken only on the rows without the target (a dose between the concentrations) has no value
    once those rows are gone: the model learns from the other columns instead of failing to bin it."""
    frame = datasets.load("penguins").dropna(subset=["body_mass_g"])[["body_mass_g", *PENGUIN_MEASURES[:3]]]
    frame["dose"] = np.nan
    out = run.chain(split_bundle(tmp_path / "dose", frame, "body_mass_g", "regression"), service)
    assert "dose" not in json.loads((out.path / "model.json").read_text())["features"]
    assert out.metrics()["n_features"] == 3


def test_regressors_reject_text_targets(run, split):
    result = run("ridge_regression", split, ok=False)
    assert result.returncode == 2 and "numeric target" in result.stderr


def test_regression_evaluator_on_known_predictions(run, regression_split, tmp_path):
    test, train = regression_split.table("test"), regression_split.table("train")
    y = test["progression"].to_numpy()
    offset = regression_split.copy_into(tmp_path / "offset")
    offset.write_predictions(pd.DataFrame({"prediction": y + 10.0}))  # every prediction 10 too high
    metrics = run("regression_evaluator", offset).output.metrics()
    assert metrics["rmse"] == pytest.approx(10.0) and metrics["mae"] == pytest.approx(10.0)
    assert metrics["nrmse"] == pytest.approx(10.0 / y.std()) and metrics["nmae"] == pytest.approx(10.0 / y.std())
    assert metrics["r2"] == pytest.approx(1 - 100.0 / y.var())
    assert metrics["baseline_rmse"] == pytest.approx(np.sqrt(np.mean((y - train["progression"].mean()) ** 2)))

    short = regression_split.copy_into(tmp_path / "short")
    short.write_predictions(pd.DataFrame({"prediction": y[:-3]}))
    result = run("regression_evaluator", short, ok=False)
    assert result.returncode == 2 and f"{len(y) - 3} predictions for {len(y)} test rows" in result.stderr
