"""The model explainer on real models and data: drivers ranked by what the held-out score loses without them,
each with its direction in words, for raw and encoded features alike."""

import json
import re

import numpy as np
import pandas as pd

from dagsmith_kit import Bundle
from tests.microservices.conftest import split_bundle


def explanation_of(out: Bundle) -> dict:
    return json.loads((out.path / "explanation.json").read_text(encoding="utf-8"))


def test_a_churn_model_on_raw_columns_is_explained_in_words(run, churn_split):
    """LightGBM takes the raw churn table (text columns, gaps); the explainer calls it the same way."""
    modelled = run("lightgbm_classifier", churn_split, {"n_estimators": 100}).output
    out = run("model_explainer", modelled).output
    explanation = explanation_of(out)
    assert explanation["scoring"] == "roc_auc" and 0.7 < explanation["score"] <= 1
    drivers = {d["feature"]: d for d in explanation["drivers"]}
    assert "contract" in list(drivers)[:3]  # month-to-month contracts are churn's best-known driver
    assert drivers["contract"]["direction"].startswith("churn = Yes most likely when contract is 'Month-to-month'")
    assert re.fullmatch(r"raising tenure from \d+ to \d+ makes churn = Yes less likely \(\d+% to \d+% on average\)",
                        drivers["tenure"]["direction"]), drivers["tenure"]
    assert [d["importance"] for d in explanation["drivers"]] == sorted(
        (d["importance"] for d in explanation["drivers"]), reverse=True)
    report = (out.path / "report.md").read_text(encoding="utf-8")
    assert "## What drives the predictions" in report and "1. **" in report
    assert (out.path / "artifacts" / "feature_importance.png").stat().st_size > 5000
    assert out.metrics()[f"explanation.{explanation['drivers'][0]['feature']}"] > 0
    # where it errs: the held-out confusion matrix and calibration, with the most common mistake in words
    assert re.search(r"The most common mistake: '(Yes|No)' predicted as '(No|Yes)' \(\d+ of \d+ '\w+' rows\)", report)
    assert "Predicted probabilities of 'Yes' average" in report and 0 < out.metrics()["errors.brier"] < 0.25
    assert (out.path / "artifacts" / "confusion_matrix.png").is_file()


def test_a_regression_names_the_feature_it_was_built_from(run, tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"size": rng.uniform(30, 200, 600), "noise": rng.normal(size=600),
                          "floor": rng.integers(0, 10, 600).astype(float)})
    frame["price"] = 3000 * frame["size"] - 500 * frame["floor"] + rng.normal(0, 20000, 600)
    bundle = split_bundle(tmp_path / "homes", frame, "price", "regression")
    modelled = run("ridge_regression", bundle).output
    explained = run("model_explainer", modelled).output
    explanation = explanation_of(explained)
    assert explanation["scoring"] == "r2"
    first, *rest = explanation["drivers"]
    assert first["feature"] == "size" and first["direction"].startswith("raising size from ")
    assert " raises price (" in first["direction"]
    assert " lowers price (" in next(d for d in rest if d["feature"] == "floor")["direction"]
    assert all(d["importance"] < 0.01 for d in rest if d["feature"] == "noise")  # absent when it costs nothing
    assert abs(explained.metrics()["errors.mean_residual"]) < 10_000  # a linear truth: residuals centred on zero
    assert "## Where the model errs" in (explained.path / "report.md").read_text(encoding="utf-8")
    assert (explained.path / "artifacts" / "residuals.png").is_file()


def test_a_column_named_self_is_explained_like_any_other(run, tmp_path):
    """Column names are the user's (``self`` flags the self-employed in survey tables): the explainer's shuffled and
    set copies of the rows must not pass them as pandas keywords."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"self": rng.integers(0, 2, 400).astype(float), "age": rng.uniform(20, 70, 400)})
    frame["visits"] = 4 * frame["self"] + 0.1 * frame["age"] + rng.normal(0, 1, 400)
    modelled = run("ridge_regression", split_bundle(tmp_path / "survey", frame, "visits", "regression")).output
    drivers = explanation_of(run("model_explainer", modelled).output)["drivers"]
    assert drivers[0]["feature"] == "self" and drivers[0]["direction"].startswith("visits highest when self is '1.0'")


def test_the_explainer_needs_a_split_and_a_model(run, churn, churn_split):
    unsplit = run("model_explainer", churn, ok=False)
    assert "run a train/test splitter first" in unsplit.stderr
    unmodelled = run("model_explainer", churn_split, ok=False)
    assert "no trained model" in unmodelled.stderr
