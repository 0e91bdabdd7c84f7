"""The leak check (``execution.doubt``) on a split that kept groups apart: a column is judged on groups it did not
learn from, as the held-out rows judge the model."""

from __future__ import annotations

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
        return review(quality, bundle, list(frame.columns), drivers, classification=False)

    assert doubt(None).startswith("`height` alone decides `baseline`")
    by_patient = doubt("patient")
    assert by_patient.startswith("a held-out R² of 0.999 is too good") and "`height`" not in by_patient, by_patient
