"""Clustering, dimensionality-reduction and anomaly-detection services, run on real data."""

import re

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import adjusted_rand_score
from sklearn.model_selection import cross_val_score
from sklearn.neighbors import KNeighborsClassifier

from dagsmith import datasets
from dagsmith_kit import Bundle
from tests.microservices.conftest import assert_finite, assert_outlier_found


@pytest.fixture
def iris_species():
    return datasets.load("iris")["species"].to_numpy()


@pytest.fixture
def iris_with_outlier(tmp_path, iris_unlabelled) -> Bundle:
    """iris plus one impossible flower (last row): a very long sepal and a very wide, short petal."""
    frame = iris_unlabelled.table("data")
    frame.loc[len(frame)] = [12.0, 3.0, 1.0, 4.5]
    return Bundle.create(tmp_path / "iris-outlier", frame, task_type="anomaly_detection")


def assert_clusters(out, n_rows):
    predictions = out.predictions()
    assert len(predictions) == n_rows and pd.api.types.is_integer_dtype(predictions["cluster"])
    assert predictions["cluster"].min() >= -1
    return predictions["cluster"].to_numpy()


# ---------------------------------------------------------------- clustering
def test_kmeans_auto_k_on_iris(run, iris_unlabelled):
    out = run("kmeans_clustering", iris_unlabelled, {"max_clusters": 6}).output
    labels = assert_clusters(out, 150)
    metrics = out.metrics()
    assert 2 <= metrics["chosen_k"] == metrics["n_clusters"] == len(set(labels)) <= 6
    assert metrics["silhouette"] > 0.4 and metrics["inertia"] > 0
    pd.testing.assert_frame_equal(out.table("data"), iris_unlabelled.table("data"))


def test_kmeans_then_evaluator_recovers_cancer_diagnosis(run, cancer):
    out = run.chain(cancer, ("kmeans_clustering", {"n_clusters": 2}), "clustering_evaluator")
    labels = assert_clusters(out, 569)
    assert set(labels) == {0, 1}
    metrics = out.metrics()
    assert metrics["adjusted_rand"] > 0.5 and metrics["normalized_mutual_info"] > 0.4
    assert 0 < metrics["silhouette"] <= 1 and metrics["calinski_harabasz"] > 100 and metrics["davies_bouldin"] > 0
    assert_finite(list(metrics.values()))


def test_dbscan_auto_eps_finds_dense_groups(run, iris_unlabelled, iris_species):
    out = run("dbscan_clustering", iris_unlabelled, {"min_samples": 5}).output
    labels = assert_clusters(out, 150)
    metrics = out.metrics()
    assert metrics["eps"] > 0 and metrics["n_clusters"] >= 2
    assert metrics.get("noise_fraction", 0.0) < 0.3
    # setosa is separated from the rest: its clustered rows share one label no other species has
    setosa = set(labels[(iris_species == "setosa") & (labels != -1)])
    assert len(setosa) == 1 and not setosa & set(labels[iris_species != "setosa"])


def test_clustering_refuses_a_split_bundle(run, split):
    result = run("dbscan_clustering", split, ok=False)
    assert "already split" in result.stderr


def test_agglomerative_and_evaluator_without_reference(run, iris_unlabelled, iris_species):
    out = run.chain(iris_unlabelled, ("agglomerative_clustering", {"n_clusters": 3, "linkage": "ward"}),
                    "clustering_evaluator")
    labels = assert_clusters(out, 150)
    assert len(set(labels)) == 3 and adjusted_rand_score(iris_species, labels) > 0.5
    metrics = out.metrics()
    assert "adjusted_rand" not in metrics and metrics["silhouette"] > 0.3 and metrics["noise_fraction"] == 0


def test_agglomerative_refuses_too_many_rows(run, iris_unlabelled):
    result = run("agglomerative_clustering", iris_unlabelled, {"max_rows": 100}, ok=False)
    assert "max_rows=100" in result.stderr


def test_gaussian_mixture_gives_membership_probabilities(run, iris_unlabelled, iris_species):
    out = run("gaussian_mixture_clustering", iris_unlabelled, {"n_components": 3}).output
    labels = assert_clusters(out, 150)
    probability = out.predictions()["probability"]
    assert probability.between(1 / 3, 1.0).all() and probability.median() > 0.9
    assert adjusted_rand_score(iris_species, labels) > 0.5
    assert_finite([out.metrics()["bic"], out.metrics()["aic"]])


# ---------------------------------------------------------------- dimensionality reduction
def test_pca_keeps_variance_fraction_and_target(run, cancer):
    out = run("pca_reducer", cancer, {"n_components": 0.95}).output
    data, metrics = out.table("data"), out.metrics()
    components = [c for c in data.columns if c.startswith("component_")]
    assert data.columns.tolist() == ["diagnosis", *components] and 2 <= len(components) < 30
    assert metrics["n_components"] == len(components) and metrics["explained_variance_ratio"] >= 0.95
    assert (data["diagnosis"] == cancer.table("data")["diagnosis"]).all()
    assert_finite(data[components])
    assert abs(data["component_1"].mean()) < 1e-9 and data["component_1"].var() > data["component_2"].var()
    report = (out.path / "report.md").read_text(encoding="utf-8")
    first = next(line for line in report.splitlines() if line.startswith("- component_1 "))
    assert f"({metrics['explained_variance_ratio_1']:.1%} of the variance)" in first
    assert len(re.findall(r"[+-]0\.\d\d ", first)) == 3  # its three heaviest features with their signed weights


def test_pca_learns_from_train_only(run, split):
    out = run("pca_reducer", split, {"n_components": 5}).output
    train, test = out.table("train"), out.table("test")
    assert [f"component_{i}" for i in range(1, 6)] == [c for c in train.columns if c != "diagnosis"]
    assert len(test) == len(split.table("test")) and abs(train["component_1"].mean()) < 1e-9
    assert abs(test["component_1"].mean()) > 1e-6  # test projected with train's centre, not its own


def test_pca_fails_clearly_on_missing_values(run, penguins):
    result = run("pca_reducer", penguins, ok=False)
    assert "missing values" in result.stderr and "impute" in result.stderr


def test_truncated_svd_does_not_centre(run, cancer):
    out = run("truncated_svd_reducer", cancer, {"n_components": 3}).output
    data, metrics = out.table("data"), out.metrics()
    assert data.columns.tolist() == ["diagnosis", "component_1", "component_2", "component_3"]
    assert (data["component_1"] > 0).all()  # non-negative data: first singular direction is non-negative
    assert 0.9 < metrics["explained_variance_ratio"] <= 1.0 + 1e-9
    result = run("truncated_svd_reducer", cancer, {"n_components": 30}, ok=False)
    assert "below the number of numeric features (30)" in result.stderr


def test_tsne_embeds_iris_in_two_dimensions(run, iris_unlabelled, iris_species):
    out = run("tsne_embedding", iris_unlabelled).output
    data = out.table("data")
    assert data.columns.tolist() == ["component_1", "component_2"] and len(data) == 150
    assert_finite(data)
    knn = cross_val_score(KNeighborsClassifier(5), data.to_numpy(), iris_species, cv=5).mean()
    assert knn > 0.85 and out.metrics()["perplexity"] == 30


def test_tsne_caps_perplexity_and_refuses_large_tables(run, tmp_path, iris_unlabelled):
    small = Bundle.create(tmp_path / "small", iris_unlabelled.table("data").sample(20, random_state=0),
                          task_type="dimensionality_reduction")
    out = run("tsne_embedding", small, {"perplexity": 30}).output
    assert out.metrics()["perplexity"] < 20 / 3 and len(out.table("data")) == 20
    result = run("tsne_embedding", iris_unlabelled, {"max_rows": 100}, ok=False)
    assert "max_rows=100" in result.stderr


@pytest.mark.parametrize("service", ["kmeans_clustering", "minibatch_kmeans", "gaussian_mixture_clustering",
                                     "agglomerative_clustering", "spectral_clustering"])
def test_clustering_says_how_many_clusters_and_what_sets_each_apart(run, iris_unlabelled, iris_species, service):
    out = run(service, iris_unlabelled).output
    labels = assert_clusters(out, 150)
    k = len(set(labels))
    report = (out.path / "report.md").read_text(encoding="utf-8")
    assert f"Number of clusters: k = {k}, the best silhouette" in report and "of k = 2 to 10" in report
    described = [line for line in report.splitlines() if line.startswith("- cluster ")]
    assert len(described) == k and all(" overall)" in line for line in described)
    setosa = np.flatnonzero(iris_species == "setosa")
    own = np.bincount(labels[setosa]).argmax()  # setosa's small petals are what sets its cluster apart
    assert "lower petal length (cm)" in next(line for line in described if line.startswith(f"- cluster {own} "))


# ---------------------------------------------------------------- anomaly detection


def test_isolation_forest_flags_malignant_tumours(run, cancer):
    out = run("isolation_forest_detector", cancer, {"contamination": 0.05, "n_estimators": 200}).output
    predictions = out.predictions()
    flagged = predictions["is_anomaly"].to_numpy()
    assert len(predictions) == 569 and abs(flagged.sum() - 0.05 * 569) <= 1
    diagnosis = cancer.table("data")["diagnosis"].to_numpy()
    assert (diagnosis[flagged] == "malignant").mean() > 0.6  # base rate is 37%
    assert out.metrics()["n_anomalies"] == flagged.sum()


def test_isolation_forest_finds_an_impossible_flower(run, iris_with_outlier):
    scored = run("isolation_forest_detector", iris_with_outlier).output
    assert_outlier_found(scored, 151)
    result = run("clustering_evaluator", scored, ok=False)  # anomaly scores are not cluster labels
    assert "no 'cluster' column" in result.stderr


def test_detectors_flag_a_short_list_and_say_why_each_row_is_unusual(run, tmp_path):
    """3% of 3,000 transactions are planted with one extreme amount or a rare channel: without a fraction from the
    goal the detector flags a few percent, finds most planted rows and names the planted value as the reason, a
    one-hot encoded channel by its value, not by its indicator column."""
    rng = np.random.default_rng(7)
    frame = pd.DataFrame({"amount": rng.lognormal(4, 0.3, 3000), "items": rng.poisson(3, 3000).astype(float),
                          "hour": rng.integers(8, 20, 3000).astype(float)})
    planted = rng.choice(3000, 90, replace=False)
    channel = pd.Series(rng.choice(["web", "store"], 3000))
    channel[planted[60:]] = "phone"
    frame = frame.join(pd.get_dummies(channel, prefix="channel", dtype=float))
    frame.loc[planted[:60], "amount"] *= 12
    frame.loc[planted[60:], "items"] = 25.0
    transactions = Bundle.create(tmp_path / "tx", frame, task_type="anomaly_detection")
    out = run("isolation_forest_detector", transactions).output
    predictions = out.predictions()
    flagged = predictions["is_anomaly"].to_numpy()
    assert 0.01 <= flagged.mean() <= 0.05
    assert flagged[planted].mean() > 0.8
    assert sorted(predictions.loc[flagged, "anomaly_rank"]) == list(range(1, flagged.sum() + 1))
    assert predictions["why"][~flagged].eq("").all()
    assert all(predictions.at[row, "why"].startswith("amount = ") for row in planted[:60] if flagged[row])
    assert any("channel = phone (only 1.0% of rows)" in predictions.at[row, "why"] for row in planted[60:])
    assert not predictions["why"].str.contains("channel_").any()
    report = (out.path / "report.md").read_text(encoding="utf-8")
    assert f"{flagged.sum()} of 3000 rows flagged" in report
    assert "upper fence" in report and "Most unusual rows" in report
    asked = run("isolation_forest_detector", transactions, {"contamination": 0.1}).output
    assert asked.predictions()["is_anomaly"].sum() == 300


def test_lof_finds_an_impossible_flower(run, iris_with_outlier):
    out = run("lof_detector", iris_with_outlier, {"n_neighbors": 20, "contamination": 0.02}).output
    predictions = assert_outlier_found(out, 151)
    assert predictions["is_anomaly"].sum() == round(0.02 * 151) and predictions["anomaly_score"].median() < 1.2


def test_robust_zscore_scores_rows_with_missing_values(run, tmp_path, iris_with_outlier):
    frame = iris_with_outlier.table("data")
    frame.iloc[:5, 0] = np.nan
    bundle = Bundle.create(tmp_path / "gappy", frame, task_type="anomaly_detection")
    out = run("robust_zscore_detector", bundle, {"threshold": 3.5}).output
    predictions = assert_outlier_found(out, 151)
    values = frame["sepal length (cm)"]
    mad = (values - values.median()).abs().median()
    assert predictions["anomaly_score"].iloc[-1] == pytest.approx(0.6745 * (12.0 - values.median()) / mad)
    assert predictions["is_anomaly"].sum() <= 5 and out.metrics()["threshold"] == 3.5
