"""The second wave of evaluation services, on real datasets, with every metric checked against scikit-learn
(or scipy, or numpy where scikit-learn has no function for it) computed directly here.

Predictions come from real model services where a test needs a saved model or a realistic chain, and from
scikit-learn models fitted in-process with the kit's own ``fit_and_predict`` otherwise (same files, faster).
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import runpy
import sys
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.calibration import calibration_curve
from sklearn.compose import make_column_transformer
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.ensemble import IsolationForest
from sklearn.inspection import permutation_importance
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.metrics import (accuracy_score, adjusted_rand_score, auc, average_precision_score,
                             balanced_accuracy_score, brier_score_loss, classification_report, cohen_kappa_score,
                             d2_absolute_error_score, explained_variance_score, f1_score, log_loss,
                             matthews_corrcoef, max_error, mean_absolute_error, mean_absolute_percentage_error,
                             median_absolute_error, precision_recall_curve, precision_score, r2_score,
                             recall_score, roc_auc_score, roc_curve, root_mean_squared_error)
from sklearn.model_selection import KFold, StratifiedKFold, cross_validate
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import LocalOutlierFactor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from dagsmith import datasets
from dagsmith_kit import Bundle, fit_and_predict
from tests.microservices.conftest import CATALOG, assert_finite, patient_visits, split_bundle

PENGUIN_MEASURES = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
CHURN_NUMERIC = ["female", "senior_citizen", "partner", "dependents", "tenure", "phone_service",
                 "paperless_billing", "monthly_charges"]




def scored_split(path, frame: pd.DataFrame, target: str, task_type: str, model) -> Bundle:
    """:func:`split_bundle` with ``model`` fitted on train and the test predictions, probabilities and
    model.joblib written exactly as a model service writes them (the kit's own ``fit_and_predict``)."""
    bundle = split_bundle(path, frame, target, task_type)
    fit_and_predict(bundle, bundle, model)
    return bundle


def variant(bundle: Bundle, path, predictions: pd.DataFrame) -> Bundle:
    """A copy of ``bundle`` with other predictions."""
    copy = bundle.copy_into(path)
    copy.write_predictions(predictions)
    return copy


@pytest.fixture(scope="module")
def cancer_scored(tmp_path_factory) -> Bundle:
    """breast_cancer, binary (benign/malignant), scored by a scaled logistic regression."""
    return scored_split(tmp_path_factory.mktemp("cancer") / "b", datasets.load("breast_cancer"), "diagnosis",
                        "binary_classification", make_pipeline(StandardScaler(), LogisticRegression()))


@pytest.fixture(scope="module")
def penguins_scored(tmp_path_factory) -> Bundle:
    """penguin measurements (3 species), scored by Gaussian naive Bayes."""
    frame = datasets.load("penguins")[["species", *PENGUIN_MEASURES]].dropna()
    return scored_split(tmp_path_factory.mktemp("penguins") / "b", frame, "species", "multiclass_classification",
                        GaussianNB())


@pytest.fixture(scope="module")
def churn_scored(tmp_path_factory) -> Bundle:
    """Telco churn (26% "Yes"), numeric columns only, scored by a scaled logistic regression."""
    frame = datasets.load("wa_churn")[["churn", *CHURN_NUMERIC]].head(3000)
    return scored_split(tmp_path_factory.mktemp("churn") / "b", frame, "churn", "binary_classification",
                        make_pipeline(StandardScaler(), LogisticRegression()))


@pytest.fixture(scope="module")
def diabetes_scored(tmp_path_factory) -> Bundle:
    """diabetes progression, scored by ridge regression."""
    return scored_split(tmp_path_factory.mktemp("diabetes") / "b", datasets.load("diabetes"), "progression",
                        "regression", Ridge(alpha=0.1))


def binary_truth(bundle: Bundle, positive: str) -> tuple[np.ndarray, np.ndarray]:
    """Whether each test row is ``positive``, and the model's probability of it."""
    return ((bundle.table("test")[bundle.target].astype(str) == positive).to_numpy(),
            bundle.predictions()[f"proba_{positive}"].to_numpy())


def labels_of(bundle: Bundle) -> tuple[np.ndarray, np.ndarray]:
    return (bundle.table("test")[bundle.target].astype(str).to_numpy(),
            bundle.predictions()["prediction"].astype(str).to_numpy())


# ---------------------------------------------------------------- binary, from the positive class's probability
def test_threshold_optimizer_finds_the_best_f1_and_youden_thresholds(run, churn_scored):
    out = run("binary_threshold_optimizer", churn_scored, {"pos_label": "Yes"}).output
    metrics = out.metrics()
    truth, score = binary_truth(churn_scored, "Yes")
    thresholds = np.unique(score)
    predicted = score[None, :] >= thresholds[:, None]  # one row per candidate threshold
    tp = (predicted & truth).sum(axis=1)
    best = np.max(2 * tp / (predicted.sum(axis=1) + truth.sum()))  # F1 = 2TP / (predicted + actual positives)
    assert metrics["f1_at_best_f1_threshold"] == pytest.approx(best, abs=1e-12)
    assert f1_score(truth, score >= metrics["threshold_best_f1"]) == pytest.approx(best, abs=1e-12)
    fpr, tpr, _ = roc_curve(truth, score)
    assert metrics["youden_j"] == pytest.approx(np.max(tpr - fpr), abs=1e-12)
    at_youden = score >= metrics["threshold_youden"]
    assert metrics["recall_at_youden_threshold"] - (at_youden & ~truth).sum() / (~truth).sum() == \
        pytest.approx(metrics["youden_j"], abs=1e-12)
    assert metrics["f1_at_default_threshold"] == pytest.approx(f1_score(truth, score >= 0.5), abs=1e-12)
    assert metrics["precision_at_default_threshold"] == pytest.approx(precision_score(truth, score >= 0.5), abs=1e-12)
    # churners are the minority: a lower threshold than 0.5 gives a better F1
    assert metrics["threshold_best_f1"] < 0.5 and best > metrics["f1_at_default_threshold"]
    assert (out.path / "model.joblib").read_bytes() == (churn_scored.path / "model.joblib").read_bytes()
    assert "Decision thresholds (positive class: Yes)" in (out.path / "report.md").read_text()


def test_precision_recall_evaluator_matches_sklearn(run, churn_scored):
    out = run("precision_recall_evaluator", churn_scored, {"pos_label": "Yes", "threshold": 0.3}).output
    metrics = out.metrics()
    truth, score = binary_truth(churn_scored, "Yes")
    precision, recall, _ = precision_recall_curve(truth, score)
    assert metrics["average_precision"] == pytest.approx(average_precision_score(truth, score), abs=1e-12)
    assert metrics["pr_auc"] == pytest.approx(auc(recall, precision), abs=1e-12)
    assert metrics["precision"] == pytest.approx(precision_score(truth, score >= 0.3), abs=1e-12)
    assert metrics["recall"] == pytest.approx(recall_score(truth, score >= 0.3), abs=1e-12)
    assert metrics["f1"] == pytest.approx(f1_score(truth, score >= 0.3), abs=1e-12)
    assert metrics["positive_rate"] == pytest.approx(truth.mean())
    assert metrics["average_precision"] > 1.5 * metrics["positive_rate"]  # far better than guessing


def test_lift_and_gain_by_decile(run, churn_scored):
    out = run("lift_gain_evaluator", churn_scored, {"pos_label": "Yes"}).output
    metrics = out.metrics()
    truth, score = binary_truth(churn_scored, "Yes")
    n = len(truth)
    ranked = truth[np.lexsort((np.arange(n), -score))]  # by score, highest first, ties in row order
    sizes = [n // 10 + (1 if i < n % 10 else 0) for i in range(10)]
    for k, end in enumerate(np.cumsum(sizes), start=1):
        assert metrics[f"cumulative_gain_{k}"] == pytest.approx(ranked[:end].sum() / truth.sum(), abs=1e-12)
        assert metrics[f"cumulative_lift_{k}"] == pytest.approx(ranked[:end].mean() / truth.mean(), abs=1e-12)
    assert metrics["cumulative_gain_10"] == pytest.approx(1.0) and metrics["cumulative_lift_10"] == pytest.approx(1.0)
    assert metrics["top_bin_lift"] > 2.0  # the top tenth holds more than twice the average share of churners
    assert metrics["roc_auc"] == pytest.approx(roc_auc_score(truth, score), abs=1e-12)
    assert "| 10 |" in (out.path / "report.md").read_text()


def test_binary_calibration_matches_sklearn_calibration_curve(run, cancer_scored):
    out = run("binary_calibration_evaluator", cancer_scored,
              {"pos_label": "malignant", "n_bins": 5, "strategy": "quantile"}).output
    metrics = out.metrics()
    truth, score = binary_truth(cancer_scored, "malignant")
    observed, predicted = calibration_curve(truth, score, n_bins=5, strategy="quantile")
    assert metrics["calibration_bins"] == len(observed) == 5
    assert metrics["calibration_max_gap"] == pytest.approx(np.abs(observed - predicted).max(), abs=1e-12)
    assert metrics["calibration_mean_gap"] == pytest.approx(np.abs(observed - predicted).mean(), abs=1e-12)
    assert metrics["brier_score"] == pytest.approx(brier_score_loss(truth, score), abs=1e-12)
    assert metrics["calibration_in_the_large"] == pytest.approx(score.mean() - truth.mean(), abs=1e-12)
    assert metrics["brier_score"] < 0.05  # logistic regression on breast_cancer is sharp and well calibrated


# ---------------------------------------------------------------- any number of classes
def test_calibration_evaluator_on_three_classes(run, penguins_scored):
    out = run("calibration_evaluator", penguins_scored, {"n_bins": 10}).output
    metrics = out.metrics()
    y_true, _ = labels_of(penguins_scored)
    predictions = penguins_scored.predictions()
    labels = [c.removeprefix("proba_") for c in predictions if c.startswith("proba_")]
    proba = predictions[[f"proba_{label}" for label in labels]].to_numpy()
    assert metrics["brier_score"] == pytest.approx(brier_score_loss(y_true, proba, labels=labels), abs=1e-12)
    confidence, top = proba.max(axis=1), np.asarray(labels)[proba.argmax(axis=1)]
    bins = np.clip(np.digitize(confidence, np.linspace(0, 1, 11)[1:-1]), 0, 9)  # [0, .1), [.1, .2), ... [.9, 1]
    gaps = [(np.mean(bins == b), abs(np.mean(top[bins == b] == y_true[bins == b]) - confidence[bins == b].mean()))
            for b in range(10) if (bins == b).any()]
    assert metrics["expected_calibration_error"] == pytest.approx(sum(w * g for w, g in gaps), abs=1e-12)
    assert metrics["max_calibration_error"] == pytest.approx(max(g for _, g in gaps), abs=1e-12)
    assert metrics["top_label_accuracy"] == pytest.approx(accuracy_score(y_true, top), abs=1e-12)
    assert metrics["mean_confidence"] == pytest.approx(confidence.mean(), abs=1e-12)
    assert 0 <= metrics["expected_calibration_error"] <= metrics["max_calibration_error"] <= 1


def test_log_loss_evaluator_against_the_training_prior(run, penguins_scored):
    out = run("log_loss_evaluator", penguins_scored).output
    metrics = out.metrics()
    y_true, _ = labels_of(penguins_scored)
    predictions = penguins_scored.predictions()
    labels = [c.removeprefix("proba_") for c in predictions if c.startswith("proba_")]
    proba = predictions[[f"proba_{label}" for label in labels]].to_numpy()
    prior = penguins_scored.table("train")["species"].value_counts(normalize=True)[labels].to_numpy()
    expected_baseline = log_loss(y_true, np.tile(prior, (len(y_true), 1)), labels=labels)
    assert metrics["log_loss"] == pytest.approx(log_loss(y_true, proba, labels=labels), abs=1e-12)
    assert metrics["baseline_log_loss"] == pytest.approx(expected_baseline, abs=1e-12)
    assert metrics["log_loss_skill"] == pytest.approx(1 - metrics["log_loss"] / expected_baseline, abs=1e-12)
    assert metrics["log_loss_skill"] > 0.7  # naive Bayes separates penguin species far better than the prior
    true_class = proba[np.arange(len(y_true)), [labels.index(label) for label in y_true]]
    assert metrics["mean_true_class_probability"] == pytest.approx(true_class.mean(), abs=1e-12)


@pytest.mark.parametrize("service", ["classification_evaluator", "log_loss_evaluator", "calibration_evaluator"])
def test_probability_scores_do_not_change_when_the_classes_are_numbered(run, penguins_scored, tmp_path, service):
    """Classes numbered 2, 10 and 11 come from a model in that order, which as text is not their order ("10" before
    "2"): scored in the model's order, one-vs-rest ROC AUC refused the labels and log loss and the Brier score
    read each class's probability as another's."""
    number = {"Adelie": 2, "Chinstrap": 10, "Gentoo": 11}
    predictions = penguins_scored.predictions()
    numbered_predictions = pd.DataFrame({"prediction": predictions["prediction"].map(number)})
    for species, n in number.items():  # the model's class order, as a model of numbered classes writes it
        numbered_predictions[f"proba_{n}"] = predictions[f"proba_{species}"]
    tables = {name: penguins_scored.table(name).assign(species=lambda t: t["species"].map(number))
              for name in ("train", "test")}
    numbered = altered(penguins_scored, tmp_path / "numbered", predictions=numbered_predictions, **tables)
    named, by_number = run(service, penguins_scored).output.metrics(), run(service, numbered).output.metrics()
    assert by_number == pytest.approx(named, abs=1e-12)
    assert {"roc_auc", "log_loss", "brier_score"} & set(by_number)


def test_classification_report_matches_sklearn_without_probabilities(run, penguins_scored, tmp_path):
    labels_only = variant(penguins_scored, tmp_path / "labels", penguins_scored.predictions()[["prediction"]])
    out = run("classification_report_evaluator", labels_only, {"max_classes": 2}).output
    metrics = out.metrics()
    y_true, y_pred = labels_of(labels_only)
    report = classification_report(y_true, y_pred, output_dict=True, zero_division=0)
    assert metrics["accuracy"] == pytest.approx(report["accuracy"], abs=1e-12) and metrics["n_classes"] == 3
    for average in ("macro", "weighted"):
        for key, name in (("precision", "precision"), ("recall", "recall"), ("f1", "f1-score")):
            assert metrics[f"{average}_{key}"] == pytest.approx(report[f"{average} avg"][name], abs=1e-12)
    largest = pd.Series(y_true).value_counts().index[:2]  # max_classes=2: the two largest classes get keys
    assert {k.split(".")[1] for k in metrics if k.startswith("class.")} == set(largest)
    for label in largest:
        assert metrics[f"class.{label}.f1"] == pytest.approx(report[label]["f1-score"], abs=1e-12)
        assert metrics[f"class.{label}.support"] == report[label]["support"]
    report_md = (out.path / "report.md").read_text()
    assert "| Adelie |" in report_md and "| Chinstrap |" not in report_md  # the smallest class is not listed...
    assert "weakest class: Chinstrap" in report_md  # ...but the averages and the summary cover it


def test_weighted_kappa_on_ordinal_job_levels(run, tmp_path):
    """Predict IBM attrition's job level (1-5, ordered) from income and experience."""
    frame = datasets.load("attrition")[["JobLevel", "MonthlyIncome", "TotalWorkingYears", "Age"]]
    bundle = scored_split(tmp_path / "levels", frame, "JobLevel", "multiclass_classification",
                          make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)))
    out = run("kappa_mcc_evaluator", bundle, {"weights": "quadratic"}).output
    metrics = out.metrics()
    y_true, y_pred = labels_of(bundle)
    order = sorted(set(y_true) | set(y_pred), key=int)
    assert metrics["cohen_kappa"] == pytest.approx(
        cohen_kappa_score(y_true, y_pred, labels=order, weights="quadratic"), abs=1e-12)
    assert metrics["matthews_corrcoef"] == pytest.approx(matthews_corrcoef(y_true, y_pred), abs=1e-12)
    assert metrics["accuracy"] == pytest.approx(accuracy_score(y_true, y_pred), abs=1e-12)
    # near misses (level 2 for 3) cost little: quadratic kappa is well above the unweighted one
    assert metrics["cohen_kappa"] > cohen_kappa_score(y_true, y_pred) + 0.05
    assert "class order: 1, 2, 3, 4, 5" in (out.path / "report.md").read_text()


def test_kappa_needs_an_order_for_text_labels(run, penguins_scored):
    result = run("kappa_mcc_evaluator", penguins_scored, {"weights": "linear"}, ok=False)
    assert result.returncode == 2 and "give label_order" in result.stderr


# ---------------------------------------------------------------- regression
def test_residual_diagnostics_match_scipy_on_heteroscedastic_diamond_prices(run, tmp_path):
    """A linear model of diamond prices: the errors grow with the price, which the diagnostics must see."""
    frame = datasets.load("diamonds")[["price", "carat", "depth", "table", "x", "y", "z"]].sample(1500, random_state=0)
    bundle = scored_split(tmp_path / "diamonds", frame, "price", "regression", LinearRegression())
    out = run("residual_analysis_evaluator", bundle).output
    metrics = out.metrics()
    y = bundle.table("test")["price"].to_numpy(dtype=float)
    pred = bundle.predictions()["prediction"].to_numpy()
    r = y - pred
    assert metrics["residual_mean"] == pytest.approx(r.mean(), abs=1e-6)
    assert metrics["residual_std"] == pytest.approx(r.std(ddof=1), rel=1e-12)
    assert metrics["residual_skew"] == pytest.approx(stats.skew(r), abs=1e-12)
    assert metrics["residual_excess_kurtosis"] == pytest.approx(stats.kurtosis(r), abs=1e-12)
    assert metrics["residual_share_beyond_2std"] == pytest.approx(np.mean(np.abs(r - r.mean()) > 2 * r.std(ddof=1)))
    assert metrics["durbin_watson"] == pytest.approx(np.sum(np.diff(r) ** 2) / np.sum(r**2), abs=1e-12)
    auxiliary = LinearRegression().fit(pred.reshape(-1, 1), r**2)
    lm = len(r) * auxiliary.score(pred.reshape(-1, 1), r**2)
    assert metrics["breusch_pagan_statistic"] == pytest.approx(lm, rel=1e-9)
    assert metrics["breusch_pagan_pvalue"] == pytest.approx(stats.chi2.sf(lm, 1), rel=1e-6, abs=1e-300)
    assert metrics["abs_residual_spearman"] == pytest.approx(stats.spearmanr(np.abs(r), pred).statistic, abs=1e-12)
    assert metrics["heteroscedastic"] == 1.0 and metrics["abs_residual_spearman"] > 0.3
    assert 1.5 < metrics["durbin_watson"] < 2.5  # shuffled test rows: no autocorrelation
    assert "changes with the prediction (heteroscedastic)" in (out.path / "report.md").read_text()


def test_regression_errors_skip_gaps_and_zero_targets(run, tmp_path):
    """Predict the fly ash content of concrete mixes (half the mixes have none: a target with zeros)."""
    frame = datasets.load("concrete").drop(columns=["compressive_strength"])
    bundle = scored_split(tmp_path / "ash", frame, "fly_ash", "regression", Ridge(alpha=1.0))
    predictions = bundle.predictions()
    predictions.loc[[3, 10, 50], "prediction"] = np.nan  # three rows the model could not score
    out = run("regression_error_evaluator", variant(bundle, tmp_path / "gaps", predictions),
              {"percentile": 95}).output
    metrics = out.metrics()
    y = bundle.table("test")["fly_ash"].to_numpy()
    keep = ~np.isnan(predictions["prediction"].to_numpy())
    y_kept, p_kept = y[keep], predictions["prediction"].to_numpy()[keep]
    assert metrics["rows_dropped"] == 3 and metrics["rows_evaluated"] == len(y) - 3
    assert metrics["mean_absolute_error"] == pytest.approx(mean_absolute_error(y_kept, p_kept), abs=1e-9)
    assert metrics["median_absolute_error"] == pytest.approx(median_absolute_error(y_kept, p_kept), abs=1e-9)
    assert metrics["max_error"] == pytest.approx(max_error(y_kept, p_kept), abs=1e-9)
    assert metrics["absolute_error_p95"] == pytest.approx(np.percentile(np.abs(y_kept - p_kept), 95), abs=1e-9)
    nonzero = y_kept != 0
    assert 0 < metrics["mape_rows_skipped"] == (~nonzero).sum()
    assert metrics["mape"] == pytest.approx(
        mean_absolute_percentage_error(y_kept[nonzero], p_kept[nonzero]), rel=1e-12)
    assert "3 test rows with a missing target or prediction were left out" in (out.path / "report.md").read_text()


def test_explained_variance_and_adjusted_r2(run, diabetes_scored):
    metrics = run("explained_variance_evaluator", diabetes_scored).output.metrics()
    y = diabetes_scored.table("test")["progression"].to_numpy()
    pred = diabetes_scored.predictions()["prediction"].to_numpy()
    r2, n = r2_score(y, pred), len(y)
    assert metrics["explained_variance"] == pytest.approx(explained_variance_score(y, pred), abs=1e-12)
    assert metrics["r2"] == pytest.approx(r2, abs=1e-12)
    assert metrics["adjusted_r2"] == pytest.approx(1 - (1 - r2) * (n - 1) / (n - 10 - 1), abs=1e-12)  # 10 features
    assert metrics["d2_absolute_error"] == pytest.approx(d2_absolute_error_score(y, pred), abs=1e-12)
    assert metrics["mean_error"] == pytest.approx(np.mean(pred - y), abs=1e-9)
    assert 0.3 < metrics["adjusted_r2"] < metrics["r2"]


# ---------------------------------------------------------------- any supervised task
def bootstrap(y_true, y_pred, score, n_resamples, random_state=42):
    """The interval the service documents: one integers(0, n, n) draw per resample from default_rng."""
    rng = np.random.default_rng(random_state)
    values = [score(y_true[rows], y_pred[rows])
              for rows in (rng.integers(0, len(y_true), len(y_true)) for _ in range(n_resamples))]
    return np.asarray(values)


def test_bootstrap_interval_for_macro_f1(run, penguins_scored):
    out = run("bootstrap_metric_ci", penguins_scored, {"metric": "f1_macro", "n_resamples": 100}).output
    metrics = out.metrics()
    y_true, y_pred = labels_of(penguins_scored)
    resampled = bootstrap(y_true, y_pred, lambda t, p: f1_score(t, p, average="macro", zero_division=0), 100)
    assert metrics["bootstrap.f1_macro.point"] == pytest.approx(f1_score(y_true, y_pred, average="macro"), abs=1e-12)
    low, high = np.quantile(resampled, [0.025, 0.975])
    assert metrics["bootstrap.f1_macro.ci_low"] == pytest.approx(low, abs=1e-12)
    assert metrics["bootstrap.f1_macro.ci_high"] == pytest.approx(high, abs=1e-12)
    assert metrics["bootstrap.f1_macro.std"] == pytest.approx(resampled.std(ddof=1), abs=1e-12)
    assert low <= metrics["bootstrap.f1_macro.point"] <= high < 1.0 + 1e-12


def test_bootstrap_interval_for_rmse(run, diabetes_scored):
    out = run("bootstrap_metric_ci", diabetes_scored, {"n_resamples": 300, "confidence": 0.9}).output
    metrics = out.metrics()
    y = diabetes_scored.table("test")["progression"].to_numpy()
    pred = diabetes_scored.predictions()["prediction"].to_numpy()
    low, high = np.quantile(bootstrap(y, pred, root_mean_squared_error, 300), [0.05, 0.95])
    assert metrics["bootstrap.rmse.point"] == pytest.approx(root_mean_squared_error(y, pred), abs=1e-9)
    assert (metrics["bootstrap.rmse.ci_low"], metrics["bootstrap.rmse.ci_high"]) == pytest.approx((low, high))
    assert "90% interval" in (out.path / "report.md").read_text()


def test_baseline_comparison_for_a_classifier(run, churn_scored):
    metrics = run("baseline_comparison_evaluator", churn_scored).output.metrics()
    y_true, y_pred = labels_of(churn_scored)
    train = churn_scored.table("train")["churn"].astype(str)
    dummy = DummyClassifier(strategy="most_frequent").fit(np.zeros((len(train), 1)), train)
    baseline = dummy.predict(np.zeros((len(y_true), 1)))
    assert metrics["baseline_accuracy"] == pytest.approx(accuracy_score(y_true, baseline), abs=1e-12)
    assert metrics["baseline_balanced_accuracy"] == pytest.approx(0.5)
    assert metrics["model_accuracy"] == pytest.approx(accuracy_score(y_true, y_pred), abs=1e-12)
    assert metrics["model_f1_macro"] == pytest.approx(f1_score(y_true, y_pred, average="macro"), abs=1e-12)
    assert metrics["accuracy_gain"] == pytest.approx(metrics["model_accuracy"] - metrics["baseline_accuracy"])
    assert metrics["balanced_accuracy_gain"] == pytest.approx(
        balanced_accuracy_score(y_true, y_pred) - 0.5, abs=1e-12)
    assert metrics["accuracy_gain"] > 0.03 and metrics["f1_macro_gain"] > 0.2


def test_baseline_comparison_for_a_regressor(run, diabetes_scored):
    metrics = run("baseline_comparison_evaluator", diabetes_scored, {"strategy": "median"}).output.metrics()
    y = diabetes_scored.table("test")["progression"].to_numpy()
    pred = diabetes_scored.predictions()["prediction"].to_numpy()
    train = diabetes_scored.table("train")["progression"]
    baseline = DummyRegressor(strategy="median").fit(np.zeros((len(train), 1)), train).predict(np.zeros((len(y), 1)))
    assert np.all(baseline == train.median())
    assert metrics["baseline_rmse"] == pytest.approx(root_mean_squared_error(y, baseline), abs=1e-9)
    assert metrics["baseline_mae"] == pytest.approx(mean_absolute_error(y, baseline), abs=1e-9)
    assert metrics["model_r2"] == pytest.approx(r2_score(y, pred), abs=1e-12)
    assert metrics["rmse_reduction"] == pytest.approx(1 - root_mean_squared_error(y, pred) / metrics["baseline_rmse"])
    assert metrics["r2_gain"] > 0.3 and metrics["rmse_reduction"] > 0.15


def test_fairness_by_senior_citizen(run, churn_scored):
    out = run("fairness_group_evaluator", churn_scored, {"group_column": "senior_citizen", "pos_label": "Yes"}).output
    metrics = out.metrics()
    test = churn_scored.table("test")
    y_true, y_pred = labels_of(churn_scored)
    rates = {}
    for group in ("0", "1"):
        rows = (test["senior_citizen"].astype(str) == group).to_numpy()
        actual, predicted = y_true[rows] == "Yes", y_pred[rows] == "Yes"
        assert metrics[f"fairness.{group}.count"] == rows.sum()
        assert metrics[f"fairness.{group}.accuracy"] == pytest.approx(accuracy_score(y_true[rows], y_pred[rows]))
        assert metrics[f"fairness.{group}.true_positive_rate"] == pytest.approx(recall_score(actual, predicted))
        assert metrics[f"fairness.{group}.false_positive_rate"] == pytest.approx(predicted[~actual].mean())
        rates[group] = predicted.mean()
        assert metrics[f"fairness.{group}.positive_rate"] == pytest.approx(rates[group])
    assert metrics["fairness.demographic_parity_difference"] == pytest.approx(abs(rates["1"] - rates["0"]))
    assert metrics["fairness.disparate_impact_ratio"] == pytest.approx(min(rates.values()) / max(rates.values()))
    assert rates["1"] > rates["0"]  # seniors churn more, and the model predicts churn more often for them
    assert "## Performance by senior_citizen (positive class: Yes)" in (out.path / "report.md").read_text()


def test_fairness_by_sex_for_a_regressor(run, diabetes_scored):
    metrics = run("fairness_group_evaluator", diabetes_scored, {"group_column": "sex"}).output.metrics()
    test = diabetes_scored.table("test")
    y, pred = test["progression"].to_numpy(), diabetes_scored.predictions()["prediction"].to_numpy()
    maes = []
    for value in test["sex"].unique():
        rows = (test["sex"] == value).to_numpy()
        key = f"fairness.{pd.Series([value]).astype('string')[0]}"
        maes.append(mean_absolute_error(y[rows], pred[rows]))
        assert metrics[f"{key}.mae"] == pytest.approx(maes[-1], abs=1e-9)
        assert metrics[f"{key}.rmse"] == pytest.approx(root_mean_squared_error(y[rows], pred[rows]), abs=1e-9)
    assert len(maes) == 2 and metrics["fairness.mae_gap"] == pytest.approx(max(maes) - min(maes), abs=1e-9)


def test_fairness_needs_a_group_column_with_few_values(run, churn_scored):
    result = run("fairness_group_evaluator", churn_scored, {"group_column": "tenure"}, ok=False)
    assert result.returncode == 2 and "bin it into fewer groups first" in result.stderr


# ---------------------------------------------------------------- with the saved model
def test_permutation_importance_of_a_real_forest(run, tmp_path):
    split = split_bundle(tmp_path / "cancer", datasets.load("breast_cancer"), "diagnosis", "binary_classification")
    out = run.chain(split, ("random_forest_classifier", {"n_estimators": 40, "random_state": 0}),
                    ("permutation_importance_evaluator", {"n_repeats": 3, "random_state": 7}))
    metrics = out.metrics()
    model, test = out.load_model(), out.table("test")
    features = list(model.feature_names_in_)
    expected = permutation_importance(model, test[features], test["diagnosis"], scoring="accuracy", n_repeats=3,
                                      random_state=7)
    for i, name in enumerate(features):
        assert metrics[f"permutation_importance.{name}.mean"] == pytest.approx(expected.importances_mean[i], abs=1e-12)
        assert metrics[f"permutation_importance.{name}.std"] == pytest.approx(expected.importances_std[i], abs=1e-12)
    assert metrics["permutation_importance.accuracy"] == pytest.approx(
        accuracy_score(test["diagnosis"], model.predict(test[features])))
    assert len(features) == 30 and max(expected.importances_mean) > 0
    top = features[int(np.argmax(expected.importances_mean))]
    assert f"| {top} |" in (out.path / "report.md").read_text()


def test_cross_validation_refits_the_saved_model(run, cancer_scored):
    out = run("cross_validation_evaluator", cancer_scored, {"n_splits": 4}).output
    metrics = out.metrics()
    model, train = out.load_model(), out.table("train")
    features = list(model.feature_names_in_)
    expected = cross_validate(clone(model), train[features], train["diagnosis"], scoring="accuracy",
                              cv=StratifiedKFold(4, shuffle=True, random_state=42), return_train_score=True)
    scores = expected["test_score"]
    for i, score in enumerate(scores, start=1):
        assert metrics[f"cv.accuracy.fold_{i}"] == pytest.approx(score, abs=1e-12)
    assert "cv.accuracy.fold_5" not in metrics
    assert metrics["cv.accuracy.mean"] == pytest.approx(scores.mean(), abs=1e-12)
    assert metrics["cv.accuracy.std"] == pytest.approx(scores.std(ddof=1), abs=1e-12)
    assert metrics["cv.accuracy.overfit_gap"] == pytest.approx(expected["train_score"].mean() - scores.mean())
    assert metrics["cv.accuracy.mean"] > 0.95 and 0 <= metrics["cv.accuracy.min"] <= metrics["cv.accuracy.max"] <= 1
    report = (out.path / "report.md").read_text()
    assert "## Cross-validation of Pipeline" in report and "4-fold cross-validation on the training rows" in report


def test_cross_validation_makes_no_more_folds_than_rows_of_the_smallest_class(run, tmp_path):
    frame = datasets.load("penguins")[["species", *PENGUIN_MEASURES]].dropna()
    scored = scored_split(tmp_path / "penguins", frame.groupby("species").head(12), "species",
                          "multiclass_classification", GaussianNB())
    smallest = int(scored.table("train")["species"].value_counts().min())
    out = run("cross_validation_evaluator", scored, {"n_splits": 50}).output
    assert f"cv.accuracy.fold_{smallest}" in out.metrics() and f"cv.accuracy.fold_{smallest + 1}" not in out.metrics()
    assert f"{smallest}-fold cross-validation on the training rows" in (out.path / "report.md").read_text()


def test_cross_validation_of_a_split_by_patient_keeps_each_patients_visits_in_one_fold(run, tmp_path):
    """A forest remembers patients by their height: on random folds it validates on visits of patients it learnt
    from and looks good; on folds of whole patients, as the held-out patients will find it, it does not."""
    frame = patient_visits(60, 6, seed=5).drop(columns="baseline")
    bundle = Bundle.create(tmp_path / "visits", frame, target="level", task_type="regression")
    split = run("group_splitter", bundle, {"group_column": "patient"}).output
    out = run.chain(split, ("random_forest_regressor", {"n_estimators": 50, "random_state": 0}),
                    ("cross_validation_evaluator", {"n_splits": 5}))
    model, train = out.load_model(), out.table("train")
    features = list(model.feature_names_in_)
    assert sorted(features) == ["dose", "height"]
    remembered = cross_validate(clone(model), train[features], train["level"], scoring="r2",
                                cv=KFold(5, shuffle=True, random_state=42))["test_score"].mean()
    grouped = out.metrics()["cv.r2.mean"]
    assert grouped < remembered - 0.3, (grouped, remembered)
    assert "each group's rows in one fold" in (out.path / "report.md").read_text()


# ---------------------------------------------------------------- unsupervised outputs
def test_anomaly_evaluator_against_known_malignant_tumours(run, tmp_path):
    """All benign tumours plus 20 malignant ones: can an isolation forest find the malignant ones?"""
    frame = datasets.load("breast_cancer")
    frame = pd.concat([frame[frame["diagnosis"] == "benign"], frame[frame["diagnosis"] == "malignant"].head(20)])
    bundle = Bundle.create(tmp_path / "rare", frame, target="diagnosis", task_type="anomaly_detection")
    out = run.chain(bundle, ("isolation_forest_detector", {"contamination": 0.05}), "anomaly_evaluator")
    metrics = out.metrics()
    truth = (frame["diagnosis"] == "malignant").to_numpy()
    predictions = out.predictions()
    score, flags = predictions["anomaly_score"].to_numpy(), predictions["is_anomaly"].to_numpy()
    assert metrics["anomaly_eval.roc_auc"] == pytest.approx(roc_auc_score(truth, score), abs=1e-12)
    assert metrics["anomaly_eval.average_precision"] == pytest.approx(average_precision_score(truth, score), abs=1e-12)
    top20 = np.argsort(-score, kind="stable")[:20]
    assert metrics["anomaly_eval.k"] == 20
    assert metrics["anomaly_eval.precision_at_k"] == pytest.approx(truth[top20].mean())
    assert metrics["anomaly_eval.flag_precision"] == pytest.approx(precision_score(truth, flags), abs=1e-12)
    assert metrics["anomaly_eval.flag_recall"] == pytest.approx(recall_score(truth, flags), abs=1e-12)
    assert metrics["anomaly_eval.anomaly_rate"] == pytest.approx(20 / len(frame))
    assert metrics["anomaly_eval.roc_auc"] > 0.8  # malignant tumours are unusual on these measurements


def test_anomaly_evaluator_without_labels_describes_the_scores(run, iris_unlabelled, tmp_path):
    values = iris_unlabelled.table("data").to_numpy()
    lof = LocalOutlierFactor(n_neighbors=20, contamination=0.05)
    flags = lof.fit_predict(values) == -1
    score = -lof.negative_outlier_factor_
    bundle = variant(iris_unlabelled, tmp_path / "lof", pd.DataFrame({"anomaly_score": score, "is_anomaly": flags}))
    metrics = run("anomaly_evaluator", bundle).output.metrics()
    assert metrics["anomaly_eval.score_mean"] == pytest.approx(score.mean())
    assert metrics["anomaly_eval.score_p99"] == pytest.approx(np.percentile(score, 99))
    assert metrics["anomaly_eval.flagged_fraction"] == pytest.approx(flags.mean())
    separation = (score[flags].mean() - score[~flags].mean()) / score.std(ddof=1)
    assert metrics["anomaly_eval.flag_separation"] == pytest.approx(separation) and separation > 1
    assert metrics["anomaly_eval.flag_overlap"] == 0.0  # LOF flags exactly the highest scores
    assert not any(key.endswith("roc_auc") for key in metrics)


def test_cluster_stability_of_kmeans_on_iris(run, iris_unlabelled):
    out = run.chain(iris_unlabelled, ("kmeans_clustering", {"n_clusters": 3}),
                    ("cluster_stability_evaluator", {"n_resamples": 20, "random_state": 3}))
    metrics = out.metrics()
    labels = out.predictions()["cluster"].to_numpy()
    values = StandardScaler().fit_transform(iris_unlabelled.table("data").to_numpy(dtype=float))
    rng, ari, agreement = np.random.default_rng(3), [], []
    for _ in range(20):
        sample = rng.integers(0, len(labels), len(labels))
        centroids = np.array([values[sample][labels[sample] == c].mean(axis=0) for c in range(3)])
        assigned = np.linalg.norm(values[:, None, :] - centroids[None], axis=2).argmin(axis=1)
        ari.append(adjusted_rand_score(labels, assigned))
        agreement.append(np.mean(assigned == labels))
    assert metrics["stability.ari_mean"] == pytest.approx(np.mean(ari), abs=1e-9)
    assert metrics["stability.ari_min"] == pytest.approx(np.min(ari), abs=1e-9)
    assert metrics["stability.agreement_mean"] == pytest.approx(np.mean(agreement), abs=1e-9)
    assert metrics["stability.full_data_agreement"] == 1.0  # k-means labels are their centroids' Voronoi cells
    assert metrics["stability.ari_mean"] > 0.8 and {f"stability.jaccard.{c}" for c in range(3)} <= set(metrics)
    assert_finite(list(metrics.values()))



# ---------------------------------------------------------------- refusals
# Each documented refusal, run through the service's real main.py command line in this process (runpy): the same
# code path and exit code as the `run` fixture, without paying an interpreter start-up per refusal.
_calls = itertools.count()


def refusal(service: str, bundle: Bundle, tmp_path, params: dict | None = None) -> str:
    """The error line ``service`` prints when it refuses ``bundle`` (asserting exit code 2)."""
    n = next(_calls)
    params_file = tmp_path / f"params-refusal-{n}.json"
    params_file.write_text(json.dumps(params or {}))
    argv = [str(CATALOG / service / "main.py"), "--input", str(bundle.path),
            "--output", str(tmp_path / f"refusal-{n}-{service}"), "--params", str(params_file)]
    stderr = io.StringIO()
    with mock.patch.object(sys, "argv", argv), contextlib.redirect_stderr(stderr), pytest.raises(SystemExit) as exit:
        runpy.run_path(argv[0], run_name="__main__")
    assert exit.value.code == 2, stderr.getvalue()
    assert stderr.getvalue().startswith("error: ")
    return stderr.getvalue()


def altered(bundle: Bundle, path, *, predictions: pd.DataFrame | None = None, **tables: pd.DataFrame) -> Bundle:
    """A copy of ``bundle`` with some tables and/or the predictions replaced."""
    copy = bundle.copy_into(path)
    for name, frame in tables.items():
        copy.write_table(name, frame)
    if predictions is not None:
        copy.write_predictions(predictions)
    return copy


@pytest.mark.parametrize("service", ["binary_threshold_optimizer", "precision_recall_evaluator",
                                     "lift_gain_evaluator", "binary_calibration_evaluator"])
def test_binary_only_evaluators_refuse_multiclass_and_missing_probabilities(penguins_scored, cancer_scored, tmp_path,
                                                                           service):
    assert "needs a binary target, but there are 3 classes" in refusal(service, penguins_scored, tmp_path)
    labels_only = altered(cancer_scored, tmp_path / "labels", predictions=cancer_scored.predictions()[["prediction"]])
    assert "no proba_ columns" in refusal(service, labels_only, tmp_path)


def test_binary_evaluators_refuse_a_test_set_without_positives(cancer_scored, tmp_path):
    benign = (cancer_scored.table("test")["diagnosis"] == "benign").to_numpy()
    only_benign = altered(cancer_scored, tmp_path / "benign", test=cancer_scored.table("test")[benign],
                          predictions=cancer_scored.predictions()[benign])
    assert "single class" in refusal("binary_threshold_optimizer", only_benign, tmp_path)
    for service in ("precision_recall_evaluator", "lift_gain_evaluator"):
        error = refusal(service, only_benign, tmp_path, {"pos_label": "malignant"})
        assert "no test row has the positive class 'malignant'" in error
    assert "n_bins must be between 2 and the" in refusal("lift_gain_evaluator", cancer_scored, tmp_path,
                                                         {"n_bins": 10_000})


@pytest.mark.parametrize("service", ["calibration_evaluator", "log_loss_evaluator"])
def test_probability_evaluators_refuse_missing_or_partial_probabilities(penguins_scored, tmp_path, service):
    predictions = penguins_scored.predictions()
    labels_only = altered(penguins_scored, tmp_path / "labels", predictions=predictions[["prediction"]])
    assert "no proba_ columns" in refusal(service, labels_only, tmp_path)
    partial = altered(penguins_scored, tmp_path / "partial", predictions=predictions.drop(columns=["proba_Gentoo"]))
    assert "test labels without a proba_ column: Gentoo" in refusal(service, partial, tmp_path)


def test_kappa_label_order_must_list_every_class(penguins_scored, tmp_path):
    error = refusal("kappa_mcc_evaluator", penguins_scored, tmp_path,
                    {"weights": "linear", "label_order": ["Adelie", "Gentoo"]})
    assert "label_order does not list these classes: Chinstrap" in error


@pytest.mark.parametrize("service", ["residual_analysis_evaluator", "explained_variance_evaluator",
                                     "bootstrap_metric_ci", "baseline_comparison_evaluator"])
def test_regression_evaluators_refuse_missing_predictions(diabetes_scored, tmp_path, service):
    predictions = diabetes_scored.predictions()
    predictions.loc[0, "prediction"] = np.nan
    gap = altered(diabetes_scored, tmp_path / "gap", predictions=predictions)
    assert "missing values; impute or drop them first" in refusal(service, gap, tmp_path)


def test_regression_evaluators_refuse_too_little_to_score(diabetes_scored, tmp_path):
    five = altered(diabetes_scored, tmp_path / "five", test=diabetes_scored.table("test").head(5),
                   predictions=diabetes_scored.predictions().head(5))
    assert "at least 8 test rows" in refusal("residual_analysis_evaluator", five, tmp_path)
    unscored = altered(diabetes_scored, tmp_path / "unscored",
                       predictions=diabetes_scored.predictions().assign(prediction=np.nan))
    assert "no test row has both a target value and a prediction" in refusal("regression_error_evaluator", unscored,
                                                                             tmp_path)


def test_baseline_comparison_refusals(churn_scored, cancer_scored, tmp_path):
    train = churn_scored.table("train")
    train.loc[train.index[:3], "churn"] = None
    gappy = altered(churn_scored, tmp_path / "gappy", train=train)
    assert "training target 'churn' has missing values" in refusal("baseline_comparison_evaluator", gappy, tmp_path)
    error = refusal("baseline_comparison_evaluator", cancer_scored, tmp_path, {"strategy": "mean"})
    assert "strategy 'mean' is not a baseline for this task" in error


def test_model_evaluators_refuse_tables_that_do_not_fit_the_model(cancer_scored, tmp_path):
    test, train = cancer_scored.table("test"), cancer_scored.table("train")
    no_radius = altered(cancer_scored, tmp_path / "no-radius", test=test.drop(columns=["mean radius"]),
                        train=train.drop(columns=["mean radius"]))
    for service, table in (("permutation_importance_evaluator", "test"), ("cross_validation_evaluator", "training")):
        error = refusal(service, no_radius, tmp_path)
        assert f"the {table} table lacks columns the model was trained on: mean radius" in error
    gappy_test = test.copy()
    gappy_test.loc[gappy_test.index[0], "mean texture"] = np.nan
    error = refusal("permutation_importance_evaluator", altered(cancer_scored, tmp_path / "g1", test=gappy_test),
                    tmp_path)
    assert "missing values in mean texture; impute them first" in error
    gappy_train = train.copy()
    gappy_train.loc[gappy_train.index[0], "diagnosis"] = None
    error = refusal("cross_validation_evaluator", altered(cancer_scored, tmp_path / "g2", train=gappy_train), tmp_path)
    assert "training target 'diagnosis' has missing values" in error
    untrained = cancer_scored.copy_into(tmp_path / "untrained")
    (untrained.path / "model.joblib").unlink()
    whole = Bundle.create(tmp_path / "whole", pd.concat([train, test]), target="diagnosis",
                          task_type="binary_classification")
    whole.save_model(cancer_scored.load_model())
    for service in ("permutation_importance_evaluator", "cross_validation_evaluator"):
        assert "holds no trained model" in refusal(service, untrained, tmp_path)
        assert "run a train/test splitter first" in refusal(service, whole, tmp_path)


def test_permutation_importance_refuses_text_features(tmp_path):
    """A model that encodes island and sex itself: permutation importance still wants numeric test columns."""
    frame = datasets.load("penguins").dropna()
    encoder = make_column_transformer((OneHotEncoder(handle_unknown="ignore"), ["island", "sex"]),
                                      (StandardScaler(), PENGUIN_MEASURES + ["year"]))
    bundle = scored_split(tmp_path / "raw", frame, "species", "multiclass_classification",
                          make_pipeline(encoder, LogisticRegression()))
    error = refusal("permutation_importance_evaluator", bundle, tmp_path)
    assert "needs numeric test features; encode these columns first: island, sex" in error


@pytest.fixture
def penguins_scored_for_anomalies(tmp_path) -> Bundle:
    """Penguin measurements with the species as a (3-valued) label, scored by an isolation forest in-process."""
    frame = datasets.load("penguins")[["species", *PENGUIN_MEASURES]].dropna()
    forest = IsolationForest(random_state=0).fit(frame[PENGUIN_MEASURES])
    bundle = Bundle.create(tmp_path / "p", frame, target="species", task_type="anomaly_detection")
    bundle.write_predictions(pd.DataFrame({"anomaly_score": -forest.score_samples(frame[PENGUIN_MEASURES]),
                                           "is_anomaly": forest.predict(frame[PENGUIN_MEASURES]) == -1}))
    return bundle


def test_anomaly_evaluator_refusals(penguins_scored_for_anomalies, penguins_scored, tmp_path):
    bundle = penguins_scored_for_anomalies
    assert "must have exactly 2 values (normal and anomalous), it has 3" in refusal("anomaly_evaluator", bundle,
                                                                                    tmp_path)
    assert "evaluate before the train/test splitter" in refusal("anomaly_evaluator", penguins_scored, tmp_path)
    clusters = altered(bundle, tmp_path / "c", predictions=pd.DataFrame({"cluster": np.zeros(len(
        bundle.table("data")), dtype=int)}))
    assert "no 'anomaly_score' column" in refusal("anomaly_evaluator", clusters, tmp_path)
    scores = bundle.predictions()
    scores.loc[0, "anomaly_score"] = np.inf
    broken = altered(bundle, tmp_path / "inf", predictions=scores)
    assert "missing or infinite values" in refusal("anomaly_evaluator", broken, tmp_path, {"label_column": None})
    assert "label_column 'fraud' is not a column of the data table" in refusal("anomaly_evaluator", bundle, tmp_path,
                                                                              {"label_column": "fraud"})


def test_cluster_stability_refusals(iris_unlabelled, penguins_scored, tmp_path):
    n = len(iris_unlabelled.table("data"))
    one = altered(iris_unlabelled, tmp_path / "one", predictions=pd.DataFrame({"cluster": np.zeros(n, dtype=int)}))
    assert "at least 2 clusters" in refusal("cluster_stability_evaluator", one, tmp_path)
    scores = altered(iris_unlabelled, tmp_path / "scores", predictions=pd.DataFrame({"anomaly_score": np.zeros(n)}))
    assert "no 'cluster' column" in refusal("cluster_stability_evaluator", scores, tmp_path)
    data = iris_unlabelled.table("data")
    data.iloc[0, 0] = np.nan
    gappy = altered(iris_unlabelled, tmp_path / "gappy", data=data,
                    predictions=pd.DataFrame({"cluster": np.arange(n) % 3}))
    assert "impute or drop them first" in refusal("cluster_stability_evaluator", gappy, tmp_path)
    assert "already split" in refusal("cluster_stability_evaluator", penguins_scored, tmp_path)


def test_fairness_refusals(churn_scored, tmp_path):
    assert "needs the group_column parameter" in refusal("fairness_group_evaluator", churn_scored, tmp_path)
    assert "must not be the target" in refusal("fairness_group_evaluator", churn_scored, tmp_path,
                                               {"group_column": "churn"})
    assert "'region' is not a column of the test table" in refusal("fairness_group_evaluator", churn_scored,
                                                                   tmp_path, {"group_column": "region"})
    error = refusal("fairness_group_evaluator", churn_scored, tmp_path,
                    {"group_column": "senior_citizen", "min_group_size": 100_000})
    assert "fewer than 2 groups of 'senior_citizen' have at least min_group_size=100000" in error


def test_supervised_evaluators_refuse_the_wrong_task_an_unsplit_bundle_and_misaligned_predictions(
        penguins_scored, diabetes_scored, tmp_path):
    assert "this step is for classification, but the task is regression" in refusal(
        "classification_report_evaluator", diabetes_scored, tmp_path)
    assert "this step is for regression, but the task is multiclass_classification" in refusal(
        "explained_variance_evaluator", penguins_scored, tmp_path)
    whole = Bundle.create(tmp_path / "whole", penguins_scored.table("test"), target="species",
                          task_type="multiclass_classification")
    whole.write_predictions(penguins_scored.predictions())
    assert "needs a train/test split" in refusal("kappa_mcc_evaluator", whole, tmp_path)
    short = altered(diabetes_scored, tmp_path / "short", predictions=diabetes_scored.predictions().head(-3))
    n = len(diabetes_scored.table("test"))
    assert f"{n - 3} predictions for {n} test rows" in refusal("regression_error_evaluator", short, tmp_path)
