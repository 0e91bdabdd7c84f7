"""The reference services other microservices are modelled on, run on real data."""

from tests.microservices.conftest import assert_finite


def test_splitter_stratifies_and_removes_data(run, cancer):
    out = run("train_test_splitter", cancer, {"test_size": 0.25, "random_state": 1}).output
    train, test = out.table("train"), out.table("test")
    assert out.table_names() == ["train", "test"]
    assert len(train) + len(test) == 569 and abs(len(test) - 569 * 0.25) <= 1
    ratio = lambda f: (f["diagnosis"] == "malignant").mean()  # noqa: E731
    assert abs(ratio(train) - ratio(test)) < 0.02


def test_splitter_rejects_bad_test_size(run, cancer):
    result = run("train_test_splitter", cancer, {"test_size": 1.5}, ok=False)
    assert "test_size must be between 0 and 1" in result.stderr


def test_median_imputer_fills_from_train_only(run, penguins):
    split = run("train_test_splitter", penguins, {"random_state": 0}).output
    out = run("median_imputer", split).output
    train_in = split.table("train")
    for name in ("train", "test"):
        frame = out.table(name)
        assert frame.drop(columns=["species"]).isna().sum().sum() == 0
    filled = out.table("test")["bill_length_mm"][split.table("test")["bill_length_mm"].isna()]
    assert (filled == train_in["bill_length_mm"].median()).all()


def test_forest_and_evaluator_beat_chance(run, split):
    out = run.chain(split, "random_forest_classifier", "classification_evaluator")
    metrics = out.metrics()
    assert metrics["roc_auc"] > 0.95 and metrics["accuracy"] > 0.9
    assert_finite(list(metrics.values()))
    predictions = out.predictions()
    assert len(predictions) == len(out.table("test"))
    assert {"proba_benign", "proba_malignant"} <= set(predictions.columns)
    assert [step["service"] for step in out.meta["lineage"]] == [
        "train_test_splitter", "random_forest_classifier", "classification_evaluator"]


def test_forest_needs_numeric_features(run, churn):
    split = run("train_test_splitter", churn).output
    result = run("random_forest_classifier", split, ok=False)
    assert result.returncode == 2 and "needs numeric features; encode these columns first" in result.stderr
