"""The leak check (``execution.doubt``): a column is judged on groups it did not learn from when the split kept groups
apart, as the held-out rows judge the model; a target computed from two columns is named, however well it scores."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dagsmith.execution.doubt import review
from dagsmith.execution.quality import Quality
from dagsmith_kit import Bundle
from tests.microservices.conftest import patient_visits


def test_a_patients_own_attribute_does_not_decide_their_level_on_new_patients(tmp_path):
    """Sixteen patients, ten visits each: on random halves of the visits a tree names each patient by height and
    'predicts' their baseline near perfectly (R² 0.999), which would blame height for a leak; on halves of the
    patients height says nothing about a new patient's baseline."""
    frame = patient_visits(16, 10, seed=5).drop(columns="level")
    drivers = [{"feature": "height", "importance": 1.0}]
    quality = Quality(valid=True, metrics={"r2": 0.999})

    def doubt(group_column: str | None) -> str | None:
        bundle = Bundle.create(tmp_path / str(group_column), target="baseline", task_type="regression",
                               id_columns=["patient"])
        bundle.write_table("train", frame)
        if group_column:
            bundle.meta["group_column"] = group_column
        return review(quality, bundle, frame, drivers, classification=False)

    assert doubt(None).startswith("`height` alone decides `baseline`")
    by_patient = doubt("patient")
    assert by_patient.startswith("a held-out R² of 0.999 is too good") and "`height`" not in by_patient, by_patient


def _regression(path, frame: pd.DataFrame, target: str) -> Bundle:
    bundle = Bundle.create(path, target=target, task_type="regression")
    bundle.write_table("train", frame)
    return bundle


@pytest.mark.parametrize(("make", "formula"), [
    (lambda f: 100 * f["members"] / f["eligible"], "100 × (members / eligible)"),
    (lambda f: f["members"] * f["eligible"], "eligible × members"),
    (lambda f: f["eligible"] - f["members"] + 3, "eligible − members + 3"),
])
def test_a_target_computed_from_two_columns_is_named_with_its_formula(tmp_path, make, formula):
    """A participation rate that is members over eligible employees, both among the features: trees fit the ratio
    well but not perfectly (R² 0.93 held out), no column alone decides it, and the explanation has the denominator
    lowering the rate; the answer is arithmetic, and the review says which."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"eligible": rng.integers(20, 2000, 800).astype(float), "age": rng.integers(1, 40, 800)})
    frame["members"] = np.floor(frame["eligible"] * rng.uniform(0.3, 1.0, 800))
    frame["match"] = rng.uniform(0, 2, 800)
    frame["rate"] = make(frame)
    drivers = [{"feature": "eligible", "importance": 0.5}, {"feature": "members", "importance": 0.4}]
    doubted = review(Quality(valid=True, metrics={"r2": 0.93}), _regression(tmp_path, frame, "rate"), frame, drivers,
                     classification=False)
    assert doubted is not None and doubted.startswith("`rate` is computed from"), doubted
    assert f"rate = {formula} on the training rows" in doubted and "--exclude" in doubted


def test_a_target_that_only_goes_with_two_columns_is_no_arithmetic(tmp_path):
    """Noise on a ratio (a measurement, not a definition) leaves the result as it is."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"eligible": rng.integers(20, 2000, 800).astype(float)})
    frame["members"] = np.floor(frame["eligible"] * rng.uniform(0.3, 1.0, 800))
    frame["rate"] = 100 * frame["members"] / frame["eligible"] + rng.normal(0, 1, 800)
    drivers = [{"feature": "eligible", "importance": 0.5}, {"feature": "members", "importance": 0.4}]
    assert review(Quality(valid=True, metrics={"r2": 0.9}), _regression(tmp_path, frame, "rate"), frame, drivers,
                  classification=False) is None


def _classification(path, frame: pd.DataFrame, target: str) -> Bundle:
    bundle = Bundle.create(path, target=target, task_type="binary_classification")
    bundle.write_table("train", frame)
    return bundle


@pytest.mark.parametrize("noise", [0.0, 8.0])
def test_a_class_that_two_columns_decide_together_is_named(tmp_path, noise):
    """Whether the home side won, beside both sides' scores: neither score alone says it (ROC AUC 0.96 held out,
    nothing near perfect), their difference does on every row. With the scores measured roughly, the difference only
    goes with the result, and the result stands."""
    rng = np.random.default_rng(7)
    frame = pd.DataFrame({"home": rng.poisson(60, 900).astype(float), "away": rng.poisson(58, 900).astype(float),
                          "crowd": rng.normal(20_000, 3_000, 900)})
    frame["home_won"] = np.where(frame["home"] > frame["away"], "yes", "no")
    frame[["home", "away"]] += rng.normal(0, noise, (900, 2))
    drivers = [{"feature": "home", "importance": 0.45}, {"feature": "away", "importance": 0.4}]
    doubted = review(Quality(valid=True, metrics={"roc_auc": 0.96}), _classification(tmp_path, frame, "home_won"),
                     frame, drivers, classification=True)
    if noise:
        assert doubted is None, doubted
    else:
        assert doubted is not None and doubted.startswith("`home_won` is decided by `"), doubted
        assert "decided by `home − away`" in doubted and "--exclude home --exclude away" in doubted, doubted
