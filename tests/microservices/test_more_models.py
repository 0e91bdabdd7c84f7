"""The second wave of model services: more classifiers and regressors (extra trees, LightGBM, AdaBoost, SGD, MLP,
LDA, lasso, elastic net, Huber, regression tree) and more clustering, anomaly-detection and reduction services,
each checked for quality on real held-out data and for the refusals it documents."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, adjusted_rand_score, r2_score, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier

from dagsmith import datasets
from dagsmith_kit import Bundle
from tests.microservices.conftest import assert_finite, assert_outlier_found, split_bundle

PENGUIN_MEASURES = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]




@pytest.fixture
def cancer_split(tmp_path) -> Bundle:
    return split_bundle(tmp_path / "cancer", datasets.load("breast_cancer"), "diagnosis", "binary_classification")


@pytest.fixture
def penguins_numeric(tmp_path) -> Bundle:
    frame = datasets.load("penguins")[["species", *PENGUIN_MEASURES]].dropna()
    return split_bundle(tmp_path / "penguins_numeric", frame, "species", "multiclass_classification")


@pytest.fixture
def penguins_raw(tmp_path) -> Bundle:
    """Raw penguins: text columns (island, sex) and missing values."""
    return split_bundle(tmp_path / "penguins_raw", datasets.load("penguins"), "species", "multiclass_classification")


@pytest.fixture
def diabetes_split(tmp_path) -> Bundle:
    return split_bundle(tmp_path / "diabetes", datasets.load("diabetes"), "progression", "regression")


@pytest.fixture
def concrete_split(tmp_path) -> Bundle:
    return split_bundle(tmp_path / "concrete", datasets.load("concrete"), "compressive_strength", "regression")


@pytest.fixture
def iris(tmp_path) -> tuple[Bundle, np.ndarray]:
    frame = datasets.load("iris")
    bundle = Bundle.create(tmp_path / "iris", frame.drop(columns=["species"]), task_type="clustering")
    return bundle, frame["species"].to_numpy()


@pytest.fixture
def iris_with_outlier(tmp_path) -> Bundle:
    """iris measurements plus one impossible flower (last row)."""
    frame = datasets.load("iris").drop(columns=["species"])
    frame.loc[len(frame)] = [12.0, 3.0, 1.0, 4.5]
    return Bundle.create(tmp_path / "iris-outlier", frame, task_type="anomaly_detection")


def check_classifier(out: Bundle, target: str, *, proba: bool = True) -> tuple[pd.DataFrame, float]:
    """Shape, label and probability checks; returns the predictions and the test accuracy."""
    test, train, predictions = out.table("test"), out.table("train"), out.predictions()
    assert len(predictions) == len(test) and set(predictions["prediction"]) <= set(train[target])
    columns = [f"proba_{label}" for label in sorted(set(train[target]))]
    if proba:
        assert list(predictions.columns) == ["prediction", *columns]
        values = predictions[columns].to_numpy()
        assert_finite(values)
        assert np.allclose(values.sum(axis=1), 1.0) and (values >= 0).all()
    else:
        assert list(predictions.columns) == ["prediction"]
    assert (out.path / "model.joblib").is_file() and out.metrics()["train_rows"] == len(train)
    return predictions, accuracy_score(test[target].astype(str), predictions["prediction"].astype(str))


def regression_scores(out: Bundle, target: str) -> tuple[float, float, float]:
    """Test RMSE, the RMSE of predicting the training mean, and R2."""
    test, predictions = out.table("test"), out.predictions()
    assert list(predictions.columns) == ["prediction"] and len(predictions) == len(test)
    assert_finite(predictions["prediction"])
    y, y_hat = test[target].to_numpy(), predictions["prediction"].to_numpy()
    baseline = np.sqrt(np.mean((y - out.table("train")[target].mean()) ** 2))
    return float(np.sqrt(np.mean((y - y_hat) ** 2))), float(baseline), float(r2_score(y, y_hat))


def refused(run, service: str, bundle: Bundle, params: dict | None = None) -> str:
    result = run(service, bundle, params, ok=False)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    return result.stderr


# ---------------------------------------------------------------- classifiers


@pytest.mark.parametrize("service, params", [
    ("extra_trees_classifier", {"n_estimators": 150}),
    ("lightgbm_classifier", {"n_estimators": 150}),
    ("adaboost_classifier", {"n_estimators": 100}),
    ("sgd_classifier", {}),
    ("mlp_classifier", {"hidden_layer_sizes": [32], "alpha": 0.01, "early_stopping": False}),
    ("linear_discriminant_analysis", {}),
])
def test_binary_classifiers_on_breast_cancer(run, cancer_split, service, params):
    out = run(service, cancer_split, params).output
    predictions, accuracy = check_classifier(out, "diagnosis")
    malignant = out.table("test")["diagnosis"] == "malignant"
    assert accuracy > 0.92  # the majority class is 63%
    assert roc_auc_score(malignant, predictions["proba_malignant"]) > 0.97
    assert [step["service"] for step in out.meta["lineage"]] == [service]
    assert "##" in (out.path / "report.md").read_text()


def test_sgd_hinge_loss_gives_labels_only(run, penguins_numeric):
    hinge = run("sgd_classifier", penguins_numeric, {"loss": "hinge"}).output
    predictions, accuracy = check_classifier(hinge, "species", proba=False)  # a linear SVM has no probabilities
    assert accuracy > 0.9 and predictions["prediction"].nunique() == 3
    assert "gives no probabilities" in (hinge.path / "report.md").read_text()


def test_lightgbm_classifier_runs_on_raw_penguins(run, penguins_raw):
    train = penguins_raw.table("train")
    assert train["sex"].isna().any() and train["bill_length_mm"].isna().any()
    out = run("lightgbm_classifier", penguins_raw).output
    predictions, accuracy = check_classifier(out, "species")
    assert accuracy > 0.95 and predictions["prediction"].nunique() == 3
    assert "island, sex" in (out.path / "report.md").read_text()
    assert out.metrics()["boosting_rounds"] == 200
    # the saved model learned the categories: an unseen island and missing values are not errors
    test = out.table("test")
    unseen = test.drop(columns=["species"]).head(4).assign(island="Atlantis", sex=None, bill_depth_mm=np.nan)
    assert out.load_model().predict_proba(unseen).shape == (4, 3)


def test_extra_trees_refuses_the_raw_table_lightgbm_accepts(run, penguins_raw):
    assert "encode these columns first: island, sex" in refused(run, "extra_trees_classifier", penguins_raw)


def test_lightgbm_refuses_json_characters_in_column_names(run, tmp_path):
    frame = datasets.load("penguins")[["species", *PENGUIN_MEASURES]].dropna()
    awkward = split_bundle(tmp_path / "awkward", frame.rename(columns={"body_mass_g": "mass[g]"}),
                           "species", "multiclass_classification")
    assert "rename these columns first: mass[g]" in refused(run, "lightgbm_classifier", awkward)


# ---------------------------------------------------------------- regressors


def test_elasticnet_beats_the_mean_on_diabetes(run, diabetes_split):
    out = run("elasticnet_regression", diabetes_split, {"alpha": 0.05, "l1_ratio": 0.5}).output
    rmse, baseline, r2 = regression_scores(out, "progression")
    assert rmse < 0.85 * baseline and r2 > 0.35  # diabetes is noisy: OLS reaches R2 ~0.4 on this split
    assert 1 <= out.metrics()["nonzero_coefficients"] <= 10


@pytest.mark.parametrize("service", ["gradient_boosting_regressor", "lightgbm_regressor"])
def test_a_column_with_more_categories_than_native_support_keeps_its_frequent_ones(run, tmp_path, service):
    """2,000 towns, a few of them holding most rows (as job titles or towns do): the frequent towns inform the model,
    the rare ones are missing to it, and the model is fitted rather than refused."""
    rng, n = np.random.default_rng(3), 3000
    towns = np.array([f"town {i}" for i in range(2000)])
    town = towns[np.minimum(rng.zipf(1.1, n) - 1, 1999)]
    effect = {name: rng.normal(0, 10) for name in towns}
    frame = pd.DataFrame({"town": town, "size": rng.uniform(0, 5, n)})
    frame["price"] = 4 * frame["size"] + frame["town"].map(effect) + rng.normal(0, 1, n)
    split = split_bundle(tmp_path / "towns", frame, "price", "regression")
    assert split.table("train")["town"].nunique() > 255
    out = run(service, split).output
    _, _, r2 = regression_scores(out, "price")
    assert r2 > 0.6  # size alone explains about a quarter of the variance: the towns were used
    assert "'town' keeps its 255 commonest values and its" in (out.path / "report.md").read_text()


def test_extra_trees_regressor_on_concrete(run, concrete_split):
    out = run("extra_trees_regressor", concrete_split, {"n_estimators": 150}).output
    rmse, baseline, r2 = regression_scores(out, "compressive_strength")
    assert r2 > 0.85 and rmse < 0.5 * baseline  # linear models reach R2 ~0.6 on concrete
    report = (out.path / "report.md").read_text()
    assert "age" in report and "cement" in report  # the two strongest drivers of strength


def test_lasso_keeps_few_features_with_a_strong_penalty(run, diabetes_split):
    out = run("lasso_regression", diabetes_split, {"alpha": 0.2}).output
    kept = out.metrics()["nonzero_coefficients"]
    assert 1 <= kept <= 5  # of 10 features; bmi and s5 always stay
    report = (out.path / "report.md").read_text()
    assert f"{kept} of 10 features kept" in report and "bmi" in report and "s5" in report
    rmse, baseline, r2 = regression_scores(out, "progression")
    assert r2 > 0.3 and rmse < 0.85 * baseline  # still close to least squares (R2 ~0.4) with half the features


def test_huber_resists_corrupted_targets_where_least_squares_breaks(run, tmp_path):
    frame = datasets.load("diabetes")
    train, test = train_test_split(frame, test_size=0.3, random_state=0)
    corrupted = train.copy()
    wild = corrupted.sample(frac=0.08, random_state=1).index
    corrupted.loc[wild, "progression"] += 1500.0  # a few data-entry errors in the training target
    bundle = Bundle.create(tmp_path / "corrupted", target="progression", task_type="regression")
    bundle.write_table("train", corrupted)
    bundle.write_table("test", test)
    huber = run("huber_regressor", bundle).output
    ols = run("linear_regression", bundle).output
    huber_rmse, baseline, huber_r2 = regression_scores(huber, "progression")
    ols_rmse, _, _ = regression_scores(ols, "progression")
    assert huber_r2 > 0.3 and huber_rmse < 0.85 * baseline
    assert huber_rmse < 0.5 * ols_rmse  # least squares is pulled far off by the corrupted rows
    assert huber.metrics()["training_outliers"] >= len(wild)


def test_regression_tree_accepts_gaps_but_refuses_text(run, tmp_path):
    frame = datasets.load("penguins").dropna(subset=["body_mass_g"])
    numeric = frame[["body_mass_g", "bill_length_mm", "bill_depth_mm", "flipper_length_mm"]].copy()
    numeric.loc[numeric.sample(frac=0.1, random_state=7).index, "flipper_length_mm"] = np.nan
    gappy = split_bundle(tmp_path / "mass", numeric, "body_mass_g", "regression")
    assert all(gappy.table(name)["flipper_length_mm"].isna().any() for name in ("train", "test"))
    out = run("decision_tree_regressor", gappy, {"max_depth": 4, "report_depth": 2}).output
    rmse, baseline, r2 = regression_scores(out, "body_mass_g")
    assert r2 > 0.6 and out.metrics()["tree_depth"] <= 4
    assert "|---" in (out.path / "report.md").read_text()
    raw = split_bundle(tmp_path / "raw", frame, "body_mass_g", "regression")
    assert "encode these columns first: species, island, sex" in refused(run, "decision_tree_regressor", raw)
    lightgbm = run("lightgbm_regressor", raw, {"n_estimators": 200}).output  # the raw table is fine for LightGBM
    rmse, baseline, r2 = regression_scores(lightgbm, "body_mass_g")
    assert r2 > 0.75 and rmse < 0.5 * baseline
    assert "used natively: species, island, sex" in (lightgbm.path / "report.md").read_text()


def test_poisson_objective_needs_a_non_negative_target(run, tmp_path):
    frame = datasets.load("diabetes").assign(progression=lambda f: f["progression"] - 150.0)
    centred = split_bundle(tmp_path / "centred", frame, "progression", "regression")
    assert "non-negative target" in refused(run, "lightgbm_regressor", centred, {"objective": "poisson"})


# ---------------------------------------------------------------- clustering


def assert_clusters(out: Bundle, n_rows: int) -> np.ndarray:
    predictions = out.predictions()
    assert len(predictions) == n_rows and pd.api.types.is_integer_dtype(predictions["cluster"])
    return predictions["cluster"].to_numpy()


def test_minibatch_kmeans_recovers_iris_species(run, iris):
    bundle, species = iris
    out = run("minibatch_kmeans", bundle, {"n_clusters": 3}).output
    labels = assert_clusters(out, 150)
    metrics = out.metrics()
    assert metrics["n_clusters"] == 3 and metrics["inertia"] > 0 and metrics["silhouette"] > 0.35
    assert adjusted_rand_score(species, labels) > 0.55


def test_minibatch_kmeans_refuses_gaps_despite_its_manifest(run, tmp_path):
    penguins = Bundle.create(tmp_path / "penguins", datasets.load("penguins").drop(columns=["species"]),
                             task_type="clustering")
    stderr = refused(run, "minibatch_kmeans", penguins)
    assert "missing values" in stderr and "impute or drop them first" in stderr


def test_spectral_clustering_on_iris_and_its_row_cap(run, iris):
    bundle, species = iris
    out = run("spectral_clustering", bundle, {"n_clusters": 3}).output
    labels = assert_clusters(out, 150)
    assert len(set(labels)) == 3 and adjusted_rand_score(species, labels) > 0.55  # k-means reaches ~0.6
    assert "max_rows=100" in refused(run, "spectral_clustering", bundle, {"max_rows": 100})


# ---------------------------------------------------------------- anomaly detection




def test_one_class_svm_flags_mostly_malignant_tumours(run, tmp_path):
    frame = datasets.load("breast_cancer")
    bundle = Bundle.create(tmp_path / "cancer", frame, target="diagnosis", task_type="anomaly_detection")
    out = run("one_class_svm_detector", bundle, {"nu": 0.05}).output
    predictions = out.predictions()
    flagged, scores = predictions["is_anomaly"].to_numpy(), predictions["anomaly_score"].to_numpy()
    assert len(predictions) == 569 and 0.01 <= flagged.mean() <= 0.05 and out.metrics()["n_anomalies"] == flagged.sum()
    assert scores[flagged].min() >= scores[~flagged].max()
    assert (frame["diagnosis"].to_numpy()[flagged] == "malignant").mean() > 0.55  # the base rate is 37%
    assert "max_rows=500" in refused(run, "one_class_svm_detector", bundle, {"max_rows": 500})


def test_elliptic_envelope_finds_an_impossible_flower(run, iris_with_outlier):
    out = run("elliptic_envelope_detector", iris_with_outlier, {"contamination": 0.02}).output
    predictions = assert_outlier_found(out, 151)
    assert abs(predictions["is_anomaly"].sum() - 0.02 * 151) <= 1
    assert predictions["anomaly_score"].iloc[-1] > 5 * predictions["anomaly_score"].median()
    assert predictions["why"].iloc[-1].startswith("sepal length (cm) = 12, above the usual")


def test_elliptic_envelope_refuses_wide_tables_and_constant_columns(run, tmp_path):
    cancer = datasets.load("breast_cancer").drop(columns=["diagnosis"])
    wide = Bundle.create(tmp_path / "wide", cancer.head(50), task_type="anomaly_detection")
    assert "needs more than 60 rows, the table has 50" in refused(run, "elliptic_envelope_detector", wide)
    flat = Bundle.create(tmp_path / "flat", datasets.load("iris").drop(columns=["species"]).assign(batch=1.0),
                         task_type="anomaly_detection")
    assert "constant columns; drop them first: batch" in refused(run, "elliptic_envelope_detector", flat)


# ---------------------------------------------------------------- dimensionality reduction


def test_nmf_learns_non_negative_parts_from_train_only(run, cancer_split):
    out = run("nmf_reducer", cancer_split, {"n_components": 3}).output
    train, test = out.table("train"), out.table("test")
    components = ["component_1", "component_2", "component_3"]
    assert train.columns.tolist() == ["diagnosis", *components] and len(test) == len(cancer_split.table("test"))
    assert (train[components].to_numpy() >= 0).all() and (test[components].to_numpy() >= 0).all()
    metrics = out.metrics()
    assert metrics["n_components"] == 3 and metrics["n_input_features"] == 30 and metrics["reconstruction_error"] > 0
    knn = KNeighborsClassifier(5).fit(train[components], train["diagnosis"])
    assert knn.score(test[components], test["diagnosis"]) > 0.85  # 3 parts still separate the diagnoses


def test_nmf_refuses_negative_values(run, diabetes_split):
    stderr = refused(run, "nmf_reducer", diabetes_split)
    assert "NMF refuses negative values" in stderr and "min-max scaling" in stderr


def test_factor_analysis_reduces_breast_cancer(run, cancer_split):
    out = run("factor_analysis_reducer", cancer_split, {"n_components": 3, "rotation": "varimax"}).output
    train, test = out.table("train"), out.table("test")
    components = ["component_1", "component_2", "component_3"]
    assert train.columns.tolist() == ["diagnosis", *components]
    assert_finite(test[components])
    assert abs(train["component_1"].mean()) < 1e-6 and abs(test["component_1"].mean()) > 1e-6  # fitted on train
    knn = KNeighborsClassifier(5).fit(train[components], train["diagnosis"])
    assert knn.score(test[components], test["diagnosis"]) > 0.88
    report = (out.path / "report.md").read_text()
    assert "Features loading most on each factor" in report and "component_3:" in report
    assert out.metrics()["n_components"] == 3 and 0 < out.metrics()["mean_noise_variance"] < 1


# ---------------------------------------------------------------- what the analyzer reads from the near-duplicates


def test_analyzer_tells_the_near_duplicates_apart():
    from dagsmith.catalog.source import ServiceSource
    from dagsmith.catalog.analysis.code import analyze_code
    from tests.microservices.conftest import CATALOG

    def analysis(name):
        return analyze_code(ServiceSource.read(CATALOG / name))

    lightgbm, extra_trees, tree = (analysis(n) for n in
                                   ("lightgbm_classifier", "extra_trees_classifier", "decision_tree_regressor"))
    assert {"handles missing values", "handles categorical features natively"} <= set(lightgbm.capabilities)
    assert any("refuses input with missing values" in r for r in extra_trees.requirements_on_input)
    assert any("numeric features only" in r for r in extra_trees.requirements_on_input)
    assert "handles missing values" in tree.capabilities  # allow_missing=True: gaps go to the tree
    assert any("numeric features only" in r for r in tree.requirements_on_input)
    assert "limits its work by max_rows (default 3000)" in analysis("spectral_clustering").capabilities
    assert "limits its work by max_rows" not in " ".join(analysis("minibatch_kmeans").capabilities)
