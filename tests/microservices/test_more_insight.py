"""More plots (precision-recall, one-vs-rest ROC, residuals, predicted vs actual, missing values, anomaly
scores) and utilities (JSON summary, column selector, predictions export, data dictionary, model card), run
on real datasets through their command line. Models are fitted in-process with the kit's own
``fit_and_predict`` so that only the services under test start processes.
"""

import io
import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from sklearn.cluster import KMeans
from sklearn.ensemble import IsolationForest, RandomForestClassifier
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import average_precision_score, f1_score, r2_score, roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from dagsmith import datasets
from dagsmith_kit import Bundle
from dagsmith_kit.supervised import fit_and_predict
from tests.microservices.conftest import ServiceRunner, split_bundle

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
PENGUIN_MEASURES = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]


def assert_png(path: Path, min_bytes: int = 8000) -> np.ndarray:
    """A real, decodable, non-blank PNG of a reasonable size; returns its pixels."""
    assert path.is_file(), f"{path.name} was not written"
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC, f"{path.name} is not a PNG"
    assert len(data) > min_bytes, f"{path.name} is suspiciously small ({len(data)} bytes)"
    pixels = plt.imread(path)
    height, width = pixels.shape[:2]
    assert width >= 400 and height >= 400, (width, height)
    assert pixels[..., :3].std() > 0.05, f"{path.name} looks blank"
    return pixels


def report_of(bundle: Bundle) -> str:
    return (bundle.path / "report.md").read_text(encoding="utf-8")


def fitted_split(folder: Path, frame: pd.DataFrame, target: str, task_type: str, model=None, *,
                 features: list[str] | None = None) -> Bundle:
    """A split bundle (25% test) with, when ``model`` is given, model.joblib and predictions.parquet."""
    bundle = split_bundle(folder, frame, target, task_type, test_size=0.25)
    if model is not None:
        fit_and_predict(bundle, bundle, model, features)
    return bundle


@pytest.fixture(scope="module")
def cancer_rf(tmp_path_factory) -> Bundle:
    """breast_cancer, split, with a random forest's predictions and probabilities (binary)."""
    return fitted_split(tmp_path_factory.mktemp("cancer") / "b", datasets.load("breast_cancer"), "diagnosis",
                        "binary_classification", RandomForestClassifier(n_estimators=60, random_state=0))


@pytest.fixture(scope="module")
def penguins_lr(tmp_path_factory) -> Bundle:
    """penguins rows with complete measurements (text columns kept), split, with the predictions of a
    scaler + logistic regression pipeline on the four measurements (3 classes)."""
    frame = datasets.load("penguins").dropna(subset=PENGUIN_MEASURES).reset_index(drop=True)
    model = make_pipeline(StandardScaler(), LogisticRegression(C=0.05, max_iter=500))
    return fitted_split(tmp_path_factory.mktemp("penguins") / "b", frame, "species", "multiclass_classification",
                        model, features=PENGUIN_MEASURES)


@pytest.fixture(scope="module")
def penguins_unmodelled(tmp_path_factory) -> Bundle:
    """All of penguins, split, no model yet."""
    return fitted_split(tmp_path_factory.mktemp("penguins-split") / "b", datasets.load("penguins"), "species",
                        "multiclass_classification")


@pytest.fixture(scope="module")
def cancer_evaluated(tmp_path_factory, cancer_rf, forked_services) -> Bundle:
    """cancer_rf after the shipped classification_evaluator (metrics.json and a lineage step)."""
    return ServiceRunner(tmp_path_factory.mktemp("evaluated"), forked_services)("classification_evaluator",
                                                                              cancer_rf).output


@pytest.fixture(scope="module")
def diabetes_ols(tmp_path_factory) -> Bundle:
    """diabetes, split, with a linear regression's predictions."""
    return fitted_split(tmp_path_factory.mktemp("diabetes") / "b", datasets.load("diabetes"), "progression",
                        "regression", LinearRegression())


def truth_and_proba(bundle: Bundle) -> tuple[np.ndarray, pd.DataFrame]:
    return bundle.table("test")[bundle.target].astype(str).to_numpy(), bundle.predictions()


# ---------------------------------------------------------------- precision-recall (binary only)
def test_precision_recall_numbers_match_sklearn(run, cancer_rf):
    out = run("precision_recall_curve_plot", cancer_rf).output
    assert_png(out.path / "artifacts" / "precision_recall_curve.png")
    y, predictions = truth_and_proba(cancer_rf)
    positive = y == "malignant"  # the model's second class
    scores = predictions["proba_malignant"].to_numpy()
    metrics = out.metrics()
    assert metrics["pr_curve.average_precision"] == pytest.approx(average_precision_score(positive, scores), abs=1e-12)
    assert metrics["pr_curve.prevalence"] == pytest.approx(positive.mean(), abs=1e-12)
    # the reported best F1 is the F1 of thresholding the probability at the reported threshold
    threshold = metrics["pr_curve.best_threshold"]
    assert metrics["pr_curve.best_f1"] == pytest.approx(f1_score(positive, scores >= threshold), abs=1e-12)
    assert metrics["pr_curve.best_f1"] >= max(f1_score(positive, scores >= t) for t in (0.3, 0.5, 0.7)) - 1e-12
    assert metrics["pr_curve.average_precision"] > 0.9 and metrics["train_rows"] == 426
    assert "positive class: malignant" in report_of(out)
    assert "![precision-recall curve](artifacts/precision_recall_curve.png)" in report_of(out)


def test_precision_recall_refuses_multiclass_unknown_class_and_no_probabilities(run, penguins_lr, cancer_rf, tmp_path):
    result = run("precision_recall_curve_plot", penguins_lr, ok=False)
    assert "the precision-recall curve needs a binary target, but there are 3 classes" in result.stderr
    result = run("precision_recall_curve_plot", cancer_rf, {"pos_label": "yes"}, ok=False)
    assert "pos_label 'yes' is not one of the classes" in result.stderr
    no_proba = cancer_rf.copy_into(tmp_path / "no-proba")
    no_proba.write_predictions(cancer_rf.predictions()[["prediction"]])
    result = run("precision_recall_curve_plot", no_proba, ok=False)
    assert "no proba_ columns: the model gave no probabilities" in result.stderr


# ---------------------------------------------------------------- one-vs-rest ROC vs the binary-only ROC plot
def test_one_vs_rest_roc_on_multiclass_penguins(run, penguins_lr):
    out = run("multiclass_roc_plot", penguins_lr).output
    assert_png(out.path / "artifacts" / "roc_one_vs_rest.png", min_bytes=15000)
    y, predictions = truth_and_proba(penguins_lr)
    labels = ["Adelie", "Chinstrap", "Gentoo"]
    metrics = out.metrics()
    for label in labels:
        expected = roc_auc_score(y == label, predictions[f"proba_{label}"])
        assert metrics[f"roc_ovr.auc.{label}"] == pytest.approx(expected, abs=1e-12), label
    proba = predictions[[f"proba_{label}" for label in labels]].to_numpy()
    assert metrics["roc_ovr.macro_auc"] == pytest.approx(
        roc_auc_score(y, proba, labels=labels, multi_class="ovr", average="macro"), abs=1e-12)
    assert metrics["roc_ovr.macro_auc"] > 0.95
    assert "| Chinstrap |" in report_of(out)
    result = run("multiclass_roc_plot", penguins_lr, {"max_classes": 2}, ok=False)
    assert "3 classes are more than max_classes=2" in result.stderr


def test_one_vs_rest_roc_on_binary_draws_the_positive_class_only(run, cancer_rf):
    out = run("multiclass_roc_plot", cancer_rf).output
    metrics = out.metrics()
    y, predictions = truth_and_proba(cancer_rf)
    expected = roc_auc_score(y == "malignant", predictions["proba_malignant"])
    assert metrics["roc_ovr.macro_auc"] == pytest.approx(expected, abs=1e-12) and expected > 0.95
    assert [k for k in metrics if k.startswith("roc_ovr.auc.")] == ["roc_ovr.auc.malignant"]
    assert_png(out.path / "artifacts" / "roc_one_vs_rest.png")


def test_one_vs_rest_roc_refuses_a_model_without_probabilities(run, tmp_path):
    frame = datasets.load("iris")
    bundle = fitted_split(tmp_path / "iris-svm", frame, "species", "multiclass_classification", SVC())
    assert not [c for c in bundle.predictions().columns if c.startswith("proba_")]
    result = run("multiclass_roc_plot", bundle, ok=False)
    assert "the predictions have no proba_ columns" in result.stderr


# ---------------------------------------------------------------- regression: residuals vs predicted-vs-actual
def test_residual_and_prediction_vs_actual_numbers_on_diabetes(run, diabetes_ols):
    out = run.chain(diabetes_ols, ("residual_plot", {"bins": 25}), "prediction_vs_actual_plot")
    for name in ("residuals.png", "prediction_vs_actual.png"):
        assert_png(out.path / "artifacts" / name)
    y = diabetes_ols.table("test")["progression"].to_numpy(dtype=float)
    predicted = diabetes_ols.predictions()["prediction"].to_numpy()
    residuals = y - predicted
    metrics = out.metrics()
    assert metrics["residual.mean"] == pytest.approx(residuals.mean(), abs=1e-9)
    assert metrics["residual.std"] == pytest.approx(residuals.std(ddof=1), abs=1e-9)
    assert metrics["residual.max_abs"] == pytest.approx(np.abs(residuals).max(), abs=1e-9)
    assert 40 < metrics["residual.std"] < 70  # OLS on diabetes: RMSE around 55
    assert metrics["pred_vs_actual.r2"] == pytest.approx(r2_score(y, predicted), abs=1e-12)
    assert 0.3 < metrics["pred_vs_actual.r2"] < 0.7
    assert metrics["pred_vs_actual.rows_plotted"] == len(y) and metrics["pred_vs_actual.rows_dropped"] == 0
    report = report_of(out)
    assert "## Residuals" in report and "## Predicted vs actual" in report


def test_residual_plot_refuses_gaps_that_prediction_vs_actual_leaves_out(run, diabetes_ols, tmp_path):
    gappy = diabetes_ols.copy_into(tmp_path / "gappy")
    test = gappy.table("test")
    test.loc[test.index[:7], "progression"] = np.nan
    gappy.write_table("test", test)
    result = run("residual_plot", gappy, ok=False)
    assert "refuses missing values: 7 missing in the test target" in result.stderr
    out = run("prediction_vs_actual_plot", gappy).output
    keep = test["progression"].notna().to_numpy()
    predicted = gappy.predictions()["prediction"].to_numpy()
    metrics = out.metrics()
    assert metrics["pred_vs_actual.rows_dropped"] == 7 and metrics["pred_vs_actual.rows_plotted"] == keep.sum()
    expected = r2_score(test["progression"][keep], predicted[keep])
    assert metrics["pred_vs_actual.r2"] == pytest.approx(expected, abs=1e-12)
    assert "7 rows with a missing target or prediction were left out" in report_of(out)
    assert_png(out.path / "artifacts" / "prediction_vs_actual.png")


def test_residual_plot_refuses_a_classifier(run, cancer_rf):
    result = run("residual_plot", cancer_rf, ok=False)
    assert "is for regression, but the task is binary_classification" in result.stderr


# ---------------------------------------------------------------- missing values
def test_missing_values_heatmap_on_penguins(run, penguins):
    out = run("missing_values_heatmap", penguins, {"max_rows": 100}).output
    assert_png(out.path / "artifacts" / "missing_values.png", min_bytes=15000)
    frame, metrics = datasets.load("penguins"), out.metrics()
    with_gaps = frame.columns[frame.isna().any()]
    assert set(with_gaps) == {"bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "sex"}
    for column in with_gaps:
        assert metrics[f"missing.{column}"] == pytest.approx(frame[column].isna().mean(), abs=1e-12)
    assert "missing.species" not in metrics and metrics["missing.columns_with_gaps"] == 5
    assert metrics["missing.rows_with_gaps"] == frame.isna().any(axis=1).sum() == 11
    assert metrics["missing.total_fraction"] == pytest.approx(frame.isna().to_numpy().mean(), abs=1e-12)
    report = report_of(out)
    assert "| sex | 11 |" in report and report.index("| sex |") < report.index("| bill_length_mm |")


def test_missing_values_heatmap_without_gaps_and_bad_limits(run, cancer_rf):
    out = run("missing_values_heatmap", cancer_rf).output  # train and test together: 569 rows
    metrics = out.metrics()
    assert metrics["missing.columns_with_gaps"] == 0 and metrics["missing.total_fraction"] == 0
    assert "No missing values." in report_of(out)
    assert_png(out.path / "artifacts" / "missing_values.png")
    result = run("missing_values_heatmap", cancer_rf, {"max_rows": 5}, ok=False)
    assert "parameter 'max_rows' must be at least 10" in result.stderr


# ---------------------------------------------------------------- anomaly scores
@pytest.fixture
def iris_scored(iris_unlabelled) -> Bundle:
    data = iris_unlabelled.table("data")
    forest = IsolationForest(n_estimators=100, contamination=0.06, random_state=0).fit(data)
    iris_unlabelled.write_predictions(pd.DataFrame({"anomaly_score": -forest.score_samples(data),
                                                    "is_anomaly": forest.predict(data) == -1}))
    return iris_unlabelled


def test_anomaly_score_plot_marks_the_flagged_rows(run, iris_scored):
    out = run("anomaly_score_plot", iris_scored, {"top_n": 5, "bins": 30}).output
    assert_png(out.path / "artifacts" / "anomaly_scores.png", min_bytes=15000)
    predictions, metrics = iris_scored.predictions(), out.metrics()
    flagged = predictions["is_anomaly"]
    assert metrics["anomaly_plot.n_flagged"] == flagged.sum() == 9
    assert metrics["anomaly_plot.threshold"] == pytest.approx(predictions["anomaly_score"][flagged].min())
    assert metrics["anomaly_plot.max_score"] == pytest.approx(predictions["anomaly_score"].max())
    top = predictions["anomaly_score"].sort_values(ascending=False, kind="stable").index[:5]
    rows = [line for line in report_of(out).splitlines() if line.startswith("| ") and "row" not in line]
    assert [int(line.split(" | ")[0][2:]) for line in rows] == list(top)
    assert all(line.endswith("| True |") for line in rows)


def test_anomaly_score_plot_needs_anomaly_scores(run, iris_unlabelled):
    data = iris_unlabelled.table("data")
    iris_unlabelled.write_predictions(pd.DataFrame({"cluster": KMeans(3, n_init=3, random_state=0).fit_predict(data)}))
    result = run("anomaly_score_plot", iris_unlabelled, ok=False)
    assert "no 'anomaly_score' column; run an anomaly detection step first" in result.stderr


# ---------------------------------------------------------------- JSON summary
def test_json_report_writer_summarises_the_run(run, cancer_evaluated):
    out = run.chain(cancer_evaluated, ("precision_recall_curve_plot", {"pos_label": "benign"}), "json_report_writer")
    summary = json.loads((out.path / "artifacts" / "run_summary.json").read_text())
    assert summary["task_type"] == "binary_classification" and summary["target"] == "diagnosis"
    assert summary["tables"] == {"train": {"rows": 426, "columns": 31}, "test": {"rows": 143, "columns": 31}}
    assert summary["has_model"] and summary["has_predictions"]
    assert summary["metrics"] == out.metrics() and summary["metrics"]["train_rows"] == 426
    assert "accuracy" in summary["metrics"] and summary["artifacts"] == ["precision_recall_curve.png"]
    assert [step["service"] for step in summary["steps"]] == ["classification_evaluator", "precision_recall_curve_plot"]
    assert "[run_summary.json](artifacts/run_summary.json)" in report_of(out)
    assert out.table("test").equals(cancer_evaluated.table("test"))
    # pos_label: the curve of the other class
    y, predictions = truth_and_proba(cancer_evaluated)
    assert summary["metrics"]["pr_curve.prevalence"] == pytest.approx((y == "benign").mean(), abs=1e-12)
    assert summary["metrics"]["pr_curve.average_precision"] == pytest.approx(
        average_precision_score(y == "benign", predictions["proba_benign"]), abs=1e-12)


def test_json_report_writer_options(run, iris_unlabelled):
    out = run("json_report_writer", iris_unlabelled, {"indent": 0, "include_lineage": False}).output
    text = (out.path / "artifacts" / "run_summary.json").read_text()
    assert text.count("\n") == 1  # one compact line
    summary = json.loads(text)
    assert "steps" not in summary and summary["tables"] == {"data": {"rows": 150, "columns": 4}}
    assert not summary["has_model"] and summary["metrics"] == {} and summary["artifacts"] == []
    result = run("json_report_writer", iris_unlabelled, {"indent": 20}, ok=False)
    assert "indent must be between 0 and 8" in result.stderr


# ---------------------------------------------------------------- column selector
def test_column_selector_keep_and_drop_on_split_penguins(run, penguins_unmodelled):
    penguins_split = penguins_unmodelled
    kept = run("column_selector", penguins_split, {"keep": ["island", "bill_length_mm"]}).output
    for name in ("train", "test"):
        before, after = penguins_split.table(name), kept.table(name)
        assert list(after.columns) == ["species", "island", "bill_length_mm"]  # target kept, table order
        assert after.equals(before[["species", "island", "bill_length_mm"]].reset_index(drop=True))
    assert kept.metrics()["columns_removed"] == 5
    dropped = run("column_selector", penguins_split, {"drop": ["year", "sex"]}).output
    train = dropped.table("train")
    assert "year" not in train.columns and "sex" not in train.columns and len(train.columns) == 6
    assert len(train) == len(penguins_split.table("train"))
    assert "removed 2: sex, year" in report_of(dropped)


def test_column_selector_refusals(run, penguins):
    result = run("column_selector", penguins, {"keep": ["bill_lenght_mm", "island"]}, ok=False)
    assert "unknown column(s): bill_lenght_mm" in result.stderr
    result = run("column_selector", penguins, {"drop": ["species"]}, ok=False)
    assert "cannot drop species: the target and id columns are always kept" in result.stderr
    result = run("column_selector", penguins, {"keep": ["island"], "drop": ["sex"]}, ok=False)
    assert "give exactly one of 'keep' or 'drop'" in result.stderr


# ---------------------------------------------------------------- predictions export
def test_predictions_csv_exporter_joins_test_rows_and_predictions(run, cancer_rf):
    out = run("predictions_csv_exporter", cancer_rf).output
    exported = pd.read_csv(out.path / "artifacts" / "predictions.csv")
    test, predictions = cancer_rf.table("test"), cancer_rf.predictions()
    assert list(exported.columns) == list(test.columns) + ["prediction", "proba_benign", "proba_malignant"]
    assert len(exported) == len(test) == out.metrics()["export.rows"]
    assert (exported["prediction"] == predictions["prediction"]).all()
    assert np.allclose(exported["mean radius"], test["mean radius"])
    assert (exported["diagnosis"] == test["diagnosis"]).all()
    slim = run("predictions_csv_exporter", cancer_rf, {"include_features": False, "max_rows": 10}).output
    exported = pd.read_csv(slim.path / "artifacts" / "predictions.csv")
    assert list(exported.columns) == ["diagnosis", "prediction", "proba_benign", "proba_malignant"]
    assert len(exported) == 10 and np.allclose(exported["proba_malignant"], predictions["proba_malignant"][:10])


def test_predictions_csv_exporter_on_clusters_and_a_name_clash(run, iris_unlabelled, tmp_path):
    data = iris_unlabelled.table("data")
    labels = KMeans(3, n_init=3, random_state=0).fit_predict(data)
    iris_unlabelled.write_predictions(pd.DataFrame({"cluster": labels}))
    out = run("predictions_csv_exporter", iris_unlabelled).output
    exported = pd.read_csv(io.StringIO((out.path / "artifacts" / "predictions.csv").read_text()))
    assert exported.shape == (150, 5) and (exported["cluster"].to_numpy() == labels).all()
    clash = iris_unlabelled.copy_into(tmp_path / "clash")
    clash.write_table("data", data.assign(cluster=0))
    result = run("predictions_csv_exporter", clash, ok=False)
    assert "already has column(s) named like the predictions (cluster)" in result.stderr


# ---------------------------------------------------------------- data dictionary
def test_data_dictionary_of_penguins(run, penguins):
    out = run("data_dictionary_writer", penguins, {"n_examples": 2}).output
    frame, metrics = datasets.load("penguins"), out.metrics()
    assert metrics["dictionary.rows"] == 344 and metrics["dictionary.columns"] == 8
    assert metrics["dictionary.numeric_columns"] == 5 and metrics["dictionary.other_columns"] == 3
    report = report_of(out)
    rows = {line.split(" | ")[0][2:]: line.split(" | ") for line in report.splitlines() if line.startswith("| ")}
    assert set(frame.columns) <= set(rows)
    assert rows["species"][1] == "target" and rows["island"][1] == "feature"
    island = rows["island"]
    assert island[3:5] == [str(frame["island"].notna().sum()), "3"]
    assert island[5].rstrip(" |") == ", ".join(frame["island"].dropna().unique()[:2])
    assert rows["bill_length_mm"][3] == "342"  # two gaps
    assert out.table("data").equals(penguins.table("data"))
    result = run("data_dictionary_writer", penguins, {"n_examples": 0}, ok=False)
    assert "parameter 'n_examples' must be at least 1" in result.stderr


# ---------------------------------------------------------------- model card
def test_model_card_for_a_forest_and_a_pipeline(run, cancer_evaluated, penguins_lr):
    out = run("model_card_writer", cancer_evaluated, {"intended_use": "Triage demo only."}).output
    card = report_of(out)[report_of(out).index("## Model card"):]
    assert "- model: `RandomForestClassifier`\n" in card and "- classes: benign, malignant" in card
    assert "- features: 30 (mean radius, mean texture" in card and ", ...)" in card
    assert "- data: train 426 rows, test 143 rows" in card and "**Intended use.** Triage demo only." in card
    assert "| n_estimators | 60 |" in card and "| random_state | 0 |" in card
    assert f"| accuracy | {out.metrics()['accuracy']:.6g} |" in card
    assert "`classification_evaluator`" in card
    pipeline = run("model_card_writer", penguins_lr, {"max_params": 3}).output
    card = report_of(pipeline)
    assert "`LogisticRegression` (last step of a 2-step scikit-learn pipeline)" in card
    assert "- classes: Adelie, Chinstrap, Gentoo" in card and f"- features: 4 ({', '.join(PENGUIN_MEASURES)})" in card
    params = card[card.index("### Parameters"):card.index("### Metrics")]
    assert params.count("\n| ") == 1 + 3  # the header and max_params rows


def test_model_card_needs_a_model(run, penguins_unmodelled):
    result = run("model_card_writer", penguins_unmodelled, ok=False)
    assert "no trained model" in result.stderr
