"""EDA, plotting and reporting services ("insight" group), run on real datasets through their command line."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.cluster import KMeans
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier

from dagsmith import datasets
from dagsmith_kit import Bundle
from tests.microservices.conftest import assert_finite

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
STATS = {"mean": lambda s: s.mean(), "std": lambda s: s.std(ddof=1), "min": lambda s: s.min(),
         "q25": lambda s: s.quantile(0.25), "median": lambda s: s.quantile(0.5),
         "q75": lambda s: s.quantile(0.75), "max": lambda s: s.max(), "count": lambda s: s.count(),
         "missing": lambda s: s.isna().sum()}


def assert_png(path: Path, min_bytes: int = 5000) -> None:
    assert path.is_file(), f"{path.name} was not written"
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC, f"{path.name} is not a PNG"
    assert len(data) > min_bytes, f"{path.name} is suspiciously small ({len(data)} bytes)"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width >= 300 and height >= 300


def assert_stats_match(metrics: dict, frame: pd.DataFrame, columns) -> None:
    for column in columns:
        for name, stat in STATS.items():
            expected = float(stat(frame[column]))
            assert metrics[f"stat.{column}.{name}"] == pytest.approx(expected, rel=0, abs=1e-9), (column, name)


# ---------------------------------------------------------------- EDA statistics
def test_eda_profile_matches_pandas_on_penguins(run, penguins):
    out = run("eda_profile_statistics", penguins).output
    frame, metrics = datasets.load("penguins"), out.metrics()
    numeric = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "year"]
    assert_stats_match(metrics, frame, numeric)
    assert metrics["stat.bill_length_mm.missing"] == 2 and metrics["stat.rows"] == 344
    for column in ("species", "island", "sex"):
        assert metrics[f"stat.{column}.unique"] == frame[column].nunique()
        assert metrics[f"stat.{column}.top_freq"] == frame[column].value_counts().iloc[0]
        assert f"stat.{column}.mean" not in metrics
    report = (out.path / "report.md").read_text()
    assert "## Data profile" in report and "| bill_length_mm |" in report and "Adelie (152)" in report
    assert out.table("data").equals(penguins.table("data"))


def test_eda_profile_after_split_describes_the_whole_dataset(run, split):
    out = run("eda_profile_statistics", split, {"include_target": False}).output
    frame, metrics = datasets.load("breast_cancer"), out.metrics()
    assert_stats_match(metrics, frame, [c for c in frame.columns if c != "diagnosis"])
    assert metrics["stat.rows"] == 569 and metrics["stat.columns"] == 30
    assert not any(key.startswith("stat.diagnosis.") for key in metrics)
    assert out.table_names() == ["train", "test"]


# ---------------------------------------------------------------- diabetes EDA chain
def test_diabetes_eda_chain_and_final_report(run, diabetes):
    out = run.chain(diabetes, "eda_profile_statistics", ("correlation_analyzer", {"method": "spearman", "top_n": 5}),
                    "outlier_report", ("distribution_plots", {"max_columns": 6}),
                    ("markdown_report", {"title": "Diabetes EDA"}))
    frame, metrics = datasets.load("diabetes"), out.metrics()
    assert_stats_match(metrics, frame, list(frame.columns))
    assert_finite(list(metrics.values()))
    # Spearman: the five strongest pairs, exactly pandas' values, sorted by |r|
    expected = frame.corr(method="spearman")
    corr = {k: v for k, v in metrics.items() if k.startswith("corr.")}
    assert len(corr) == 5
    assert corr["corr.s1.s2"] == pytest.approx(expected.loc["s1", "s2"], abs=1e-12) and abs(corr["corr.s1.s2"]) > 0.8
    pairs = expected.where(np.triu(np.ones(expected.shape, bool), 1)).stack().dropna()
    strongest = sorted(pairs.abs(), reverse=True)[:5]
    assert sorted(map(abs, corr.values()), reverse=True) == pytest.approx(strongest, abs=1e-12)
    # outliers: counts of the IQR and z rules, target excluded by default, data untouched
    for column in ("bmi", "s3", "s6"):
        values = frame[column]
        q1, q3 = values.quantile([0.25, 0.75])
        iqr = ((values < q1 - 1.5 * (q3 - q1)) | (values > q3 + 1.5 * (q3 - q1))).sum()
        z = (((values - values.mean()) / values.std()).abs() > 3).sum()
        assert metrics[f"outliers.{column}.iqr"] == iqr and metrics[f"outliers.{column}.zscore"] == z
    assert metrics["outliers.total_iqr"] > 0 and "outliers.progression.iqr" not in metrics
    assert out.table("data").equals(diabetes.table("data"))
    for name in ("correlation_spearman.png", "distributions.png"):
        assert_png(out.path / "artifacts" / name)
    report = (out.path / "report.md").read_text()
    for section in ("## Data profile", "## Spearman correlations", "## Outliers", "## Distributions",
                    "# Diabetes EDA", "- task: regression", "- target: progression",
                    "![distributions](artifacts/distributions.png)", "`outlier_report`"):
        assert section in report, section
    assert report.index("# Diabetes EDA") > report.index("## Outliers")


# ---------------------------------------------------------------- correlation and distributions on mixed data
def test_pearson_correlation_on_penguins_with_missing_values(run, penguins):
    out = run("correlation_analyzer", penguins, {"top_n": 3}).output
    metrics, frame = out.metrics(), datasets.load("penguins")
    expected = frame.select_dtypes("number").corr()
    assert len(metrics) == 3
    assert metrics["corr.flipper_length_mm.body_mass_g"] == pytest.approx(
        expected.loc["flipper_length_mm", "body_mass_g"], abs=1e-12)
    assert sorted(abs(v) for v in metrics.values())[0] > 0.59  # year and bill depth are weaker
    assert_png(out.path / "artifacts" / "correlation_pearson.png")


def test_correlation_rejects_unknown_method(run, penguins):
    result = run("correlation_analyzer", penguins, {"method": "kendall_tau"}, ok=False)
    assert "method must be 'pearson' or 'spearman'" in result.stderr


def test_distribution_plots_mixed_columns(run, penguins):
    out = run("distribution_plots", penguins, {"bins": 20}).output
    assert_png(out.path / "artifacts" / "distributions.png", min_bytes=20000)
    assert "8 columns plotted" in (out.path / "report.md").read_text()


# ---------------------------------------------------------------- model plots on breast_cancer
def test_classifier_plots_and_report(run, split):
    model_out = run("random_forest_classifier", split, {"n_estimators": 100}).output
    out = run.chain(model_out, ("confusion_matrix_plot", {"normalize": "true"}), "roc_curve_plot",
                    ("feature_importance_plot", {"top_n": 10}), "markdown_report")
    for name in ("confusion_matrix.png", "roc_curve.png", "feature_importance.png"):
        assert_png(out.path / "artifacts" / name)
    metrics = out.metrics()
    test = out.table("test")
    assert 0.9 * len(test) < metrics["confusion.correct"] <= len(test)
    assert metrics["roc_curve.auc"] > 0.95
    report = (out.path / "report.md").read_text()
    importance = report[report.index("## Feature importance"):]
    rows = [line for line in importance.splitlines()[4:14] if line.startswith("| ")]
    assert len(rows) == 10 and all(row.split(" | ")[0][2:] in test.columns for row in rows)
    model = model_out.load_model()
    best = model.feature_names_in_[np.argmax(model.feature_importances_)]
    assert rows[0].startswith(f"| {best} |")
    for link in ("artifacts/confusion_matrix.png", "artifacts/roc_curve.png", "artifacts/feature_importance.png"):
        assert f"]({link})" in report[report.index("# Pipeline report"):]
    assert "`random_forest_classifier`" in report and "roc_curve.auc" in report


def test_feature_importance_fails_for_model_without_importances(run, split, tmp_path):
    bundle = split.copy_into(tmp_path / "knn")
    train = bundle.table("train")
    bundle.save_model(KNeighborsClassifier().fit(train.drop(columns="diagnosis"), train["diagnosis"]))
    result = run("feature_importance_plot", bundle, ok=False)
    assert "KNeighborsClassifier exposes neither feature_importances_ nor coef_" in result.stderr


def _iris_split(tmp_path, with_proba: bool) -> Bundle:
    frame = datasets.load("iris").sample(frac=1, random_state=0).reset_index(drop=True)
    bundle = Bundle.create(tmp_path / f"iris-split-{with_proba}", target="species",
                           task_type="multiclass_classification")
    train, test = frame.iloc[:110], frame.iloc[110:]
    bundle.write_table("train", train)
    bundle.write_table("test", test)
    features = [c for c in frame.columns if c != "species"]
    model = LogisticRegression(max_iter=1000).fit(train[features], train["species"])
    predictions = pd.DataFrame({"prediction": model.predict(test[features])})
    if with_proba:
        for i, label in enumerate(model.classes_):
            predictions[f"proba_{label}"] = model.predict_proba(test[features])[:, i]
    bundle.write_predictions(predictions)
    bundle.save_model(model)
    return bundle


def test_roc_curve_rejects_multiclass_and_missing_probabilities(run, tmp_path):
    result = run("roc_curve_plot", _iris_split(tmp_path, with_proba=True), ok=False)
    assert "needs a binary target, but there are 3 classes" in result.stderr
    result = run("roc_curve_plot", _iris_split(tmp_path, with_proba=False), ok=False)
    assert "no proba_ columns" in result.stderr


def test_multiclass_confusion_counts_and_coefficients(run, tmp_path):
    bundle = _iris_split(tmp_path, with_proba=False)
    out = run.chain(bundle, "confusion_matrix_plot", "feature_importance_plot")
    predictions, test = bundle.predictions(), bundle.table("test")
    assert out.metrics()["confusion.correct"] == (predictions["prediction"] == test["species"]).sum() > 30
    assert_png(out.path / "artifacts" / "confusion_matrix.png")
    assert_png(out.path / "artifacts" / "feature_importance.png")
    assert "mean |coefficient|" in (out.path / "report.md").read_text()


# ---------------------------------------------------------------- clusters
@pytest.fixture
def iris_clustered(iris_unlabelled) -> Bundle:
    data = iris_unlabelled.table("data")
    labels = KMeans(n_clusters=3, n_init=10, random_state=0).fit_predict(data)
    labels[:5] = -1  # a few noise points, as DBSCAN would give
    iris_unlabelled.write_predictions(pd.DataFrame({"cluster": labels}))
    return iris_unlabelled


def test_cluster_scatter_with_pca_projection(run, iris_clustered):
    out = run("cluster_scatter_plot", iris_clustered).output
    assert_png(out.path / "artifacts" / "cluster_scatter.png", min_bytes=15000)
    report = (out.path / "report.md").read_text()
    assert "150 rows projected on PC1 / PC2" in report
    assert out.table("data").equals(iris_clustered.table("data"))


def test_cluster_scatter_uses_components_and_needs_clusters(run, iris_clustered, tmp_path):
    data = iris_clustered.table("data")
    reduced = iris_clustered.copy_into(tmp_path / "reduced")
    reduced.write_table("data", data.assign(component_1=data.iloc[:, 2], component_2=data.iloc[:, 3]))
    out = run("cluster_scatter_plot", reduced).output
    assert "projected on component_1 / component_2" in (out.path / "report.md").read_text()
    assert_png(out.path / "artifacts" / "cluster_scatter.png")
    unclustered = iris_clustered.copy_into(tmp_path / "unclustered")
    unclustered.write_predictions(pd.DataFrame({"anomaly_score": np.zeros(len(data))}))
    result = run("cluster_scatter_plot", unclustered, ok=False)
    assert "no 'cluster' column" in result.stderr


# ---------------------------------------------------------------- components
def test_component_plot_of_a_reduction_shows_the_variance_it_keeps(run, iris_unlabelled):
    reduced = run("pca_reducer", iris_unlabelled, {"n_components": 3}).output
    out = run("component_plot", reduced).output
    assert_png(out.path / "artifacts" / "components.png", min_bytes=15000)
    kept = sum(reduced.metrics()[f"explained_variance_ratio_{i}"] for i in (1, 2))
    report = (out.path / "report.md").read_text()
    assert f"150 rows on component_1 / component_2. The first two keep {kept:.1%} of the variance." in report
    assert "Arrows" not in report  # the reduction's own components: their loadings are in its report


def test_component_plot_projects_the_features_itself_and_draws_what_loads(run, iris_unlabelled, tmp_path):
    out = run("component_plot", iris_unlabelled, {"arrows": 2}).output
    assert_png(out.path / "artifacts" / "components.png", min_bytes=15000)
    report = (out.path / "report.md").read_text()
    assert "150 rows on PC1 / PC2. The first two keep " in report
    assert report.count(", ") == 1 and "Arrows: the features that load most (" in report
    one = iris_unlabelled.copy_into(tmp_path / "one")
    one.write_table("data", iris_unlabelled.table("data").iloc[:, :1])
    assert "at least two numeric features" in run("component_plot", one, ok=False).stderr
