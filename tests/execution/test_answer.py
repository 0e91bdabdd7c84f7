"""The answer's paragraph for groups found: in the table's own units, and doubted when the groups barely separate."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dagsmith.execution.answer import SUBSTANTIAL_SILHOUETTE, StepOutcome, summarise
from dagsmith.models.catalog import Stage, TaskType
from dagsmith_kit import Bundle
from dagsmith_kit.insight import readable_number


def _clustered(tmp_path, silhouette: float) -> tuple[pd.DataFrame, list[StepOutcome]]:
    """A loaded table of ages and incomes, then the same rows standardised and clustered by age."""
    rng = np.random.default_rng(1)
    table = pd.DataFrame({"age": rng.integers(20, 70, 300).astype(float), "income": rng.normal(50_000, 9_000, 300)})
    loaded = Bundle.create(tmp_path / "00", table)
    scaled = Bundle.create(tmp_path / "01", (table - table.mean()) / table.std(ddof=0))
    scaled.write_predictions(pd.DataFrame({"cluster": (table["age"] > 45).astype(int)}))
    scaled.write_metrics({"silhouette": silhouette})
    return table, [StepOutcome(0, Stage.LOADING, "tabular_loader", loaded.path),
                   StepOutcome(1, Stage.CLUSTERING, "kmeans_clustering", scaled.path)]


def test_groups_are_described_in_the_table_s_own_units(tmp_path):
    table, steps = _clustered(tmp_path, 0.6)
    answer = summarise(TaskType.CLUSTERING, None, steps, None, None)
    older = table.loc[table["age"] > 45, "age"].mean()
    assert f"higher age ({readable_number(older)} against {readable_number(table['age'].mean())} overall)" in answer
    assert "e-1" not in answer and "barely separate" not in answer


@pytest.mark.parametrize("silhouette", [0.07, SUBSTANTIAL_SILHOUETTE])
def test_groups_that_barely_separate_are_reported_as_such(tmp_path, silhouette):
    _, steps = _clustered(tmp_path, silhouette)
    answer = summarise(TaskType.CLUSTERING, None, steps, None, None)
    assert answer.startswith(f"Found 2 groups (silhouette {silhouette:.2f}), but they barely separate")
