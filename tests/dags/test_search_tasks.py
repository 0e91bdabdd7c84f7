"""A model search's tasks: side by side on a deployment; in rank order where the run's tasks run one at a time
(``dag.test()``), wired so that a later candidate runs whatever the one before did, but never after the steps
feeding the search failed."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagsmith.airflow.pipeline_dag import build
from dagsmith.models.airflow import IN_TURN_VARIABLE
from dagsmith.models.plan import DagSpec, DagStep, ModelSearch

CANDIDATES = ["lightgbm_classifier", "gradient_boosting_classifier", "logistic_regression"]


def _search_dag(tmp_path: Path):
    steps = [DagStep(position=0, stage="loading", microservice="tabular_loader"),
             DagStep(position=1, stage="splitting", microservice="train_test_splitter", depends_on=[0]),
             DagStep(position=2, stage="modelling", microservice=CANDIDATES[0], depends_on=[1],
                     search=ModelSearch(candidates=CANDIDATES, budget_seconds=10, metric="roc_auc", reason="test"))]
    dag = build(DagSpec(pipeline_id=7, name="churn", goal="predict churn", owner="ana",
                        dataset=str(tmp_path / "churn.csv"), steps=steps))
    return [dag.task_dict[f"step_02_modelling__{name}"] for name in CANDIDATES]


def test_on_a_deployment_the_candidates_run_side_by_side(tmp_path, monkeypatch):
    monkeypatch.delenv(IN_TURN_VARIABLE, raising=False)
    for candidate in _search_dag(tmp_path):
        assert candidate.upstream_task_ids == {"start", "step_01_splitting__train_test_splitter"}
        assert candidate.trigger_rule == "all_success"


@pytest.mark.parametrize("rank", [1, 2])
def test_one_task_at_a_time_the_candidates_run_in_rank_order(tmp_path, monkeypatch, rank):
    monkeypatch.setenv(IN_TURN_VARIABLE, "1")
    first, *later = _search_dag(tmp_path)
    assert first.upstream_task_ids == {"start", "step_01_splitting__train_test_splitter"}
    candidate = later[rank - 1]
    # start is no upstream: its success would let the candidate run after the splitting failed
    assert candidate.upstream_task_ids == {"step_01_splitting__train_test_splitter",
                                           f"step_02_modelling__{CANDIDATES[rank - 1]}"}
    assert candidate.trigger_rule == "all_done_min_one_success"
