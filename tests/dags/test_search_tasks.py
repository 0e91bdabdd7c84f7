"""A model search's tasks: a task per candidate, side by side, on a deployment; one task for them all where the run's
tasks run one at a time (``dag.test()``), which would otherwise run them one after another."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagsmith.airflow.pipeline_dag import build
from dagsmith.config import CANDIDATES_AT_ONCE_VARIABLE, ConfigurationError, Settings, usable_cpus
from dagsmith.models.airflow import ONE_AT_A_TIME_VARIABLE
from dagsmith.models.plan import DagSpec, DagStep, ModelSearch

CANDIDATES = ["lightgbm_classifier", "gradient_boosting_classifier", "logistic_regression"]


def _search_dag(tmp_path: Path) -> dict:
    steps = [DagStep(position=0, stage="loading", microservice="tabular_loader"),
             DagStep(position=1, stage="splitting", microservice="train_test_splitter", depends_on=[0]),
             DagStep(position=2, stage="modelling", microservice=CANDIDATES[0], depends_on=[1],
                     search=ModelSearch(candidates=CANDIDATES, budget_seconds=10, metric="roc_auc", reason="test"))]
    dag = build(DagSpec(pipeline_id=7, name="churn", goal="predict churn", owner="ana",
                        dataset=str(tmp_path / "churn.csv"), steps=steps))
    return dag.task_dict


def test_on_a_deployment_the_candidates_run_side_by_side(tmp_path, monkeypatch):
    monkeypatch.delenv(ONE_AT_A_TIME_VARIABLE, raising=False)
    tasks = _search_dag(tmp_path)
    for name in CANDIDATES:
        candidate = tasks[f"step_02_modelling__{name}"]
        assert candidate.upstream_task_ids == {"start", "step_01_splitting__train_test_splitter"}
        assert candidate.trigger_rule == "all_success" and candidate.candidate == name
    assert tasks["step_02_modelling__select"].upstream_task_ids == {"start", *(f"step_02_modelling__{name}"
                                                                               for name in CANDIDATES)}


def test_one_task_at_a_time_one_task_runs_every_candidate_in_rank_order(tmp_path, monkeypatch):
    monkeypatch.setenv(ONE_AT_A_TIME_VARIABLE, "1")
    tasks = _search_dag(tmp_path)
    assert not any(f"step_02_modelling__{name}" in tasks for name in CANDIDATES)
    candidates = tasks["step_02_modelling__candidates"]
    assert candidates.candidates == tuple(CANDIDATES) and candidates.candidate is None
    # it runs only once the steps feeding the search succeeded
    assert candidates.upstream_task_ids == {"start", "step_01_splitting__train_test_splitter"}
    assert candidates.trigger_rule == "all_success"
    assert tasks["step_02_modelling__select"].upstream_task_ids == {"start", "step_02_modelling__candidates"}


@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5"])
def test_how_many_candidates_fit_at_once_defaults_to_the_cpus_and_a_bad_value_is_named(monkeypatch, value):
    monkeypatch.delenv(CANDIDATES_AT_ONCE_VARIABLE, raising=False)
    assert Settings.from_env().candidates_at_once == usable_cpus() >= 1
    monkeypatch.setenv(CANDIDATES_AT_ONCE_VARIABLE, "3")
    assert Settings.from_env().candidates_at_once == 3
    monkeypatch.setenv(CANDIDATES_AT_ONCE_VARIABLE, value)
    with pytest.raises(ConfigurationError, match=f"{CANDIDATES_AT_ONCE_VARIABLE} must be a positive whole number, "
                                                 f"not '{value}'"):
        Settings.from_env()
