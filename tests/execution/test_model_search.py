"""The modelling stage's search through real runs: the best validation wins, a failed candidate is one fewer, and a
table nothing can learn from fails the run saying so."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sqlalchemy import select

from dagsmith.agents.planner import plan
from dagsmith.models.plan import ModelSearch
from dagsmith.runtime.local import LocalRuntime
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from tests.execution.conftest import NUMERIC_PREPARATION, run_in_process


def _search_exactly(settings, planned, candidates: list[str], params: dict[str, dict]) -> int:
    """Make the modelling step search ``candidates`` with ``params``; returns its position."""
    modelling = next(s for s in planned.steps if s.stage == "modelling")
    with session_scope(settings) as session:
        step = session.scalar(select(schema.PipelineStep).where(schema.PipelineStep.pipeline_id == planned.id,
                                                                schema.PipelineStep.position == modelling.position))
        search = ModelSearch.model_validate(step.search)
        step.search = search.model_copy(update={"candidates": candidates, "params": params}).model_dump(mode="json")
    return modelling.position


def _modelling_tries(outcome: dict) -> list[dict]:
    return next(s for s in outcome["trace"]["steps"] if s["stage"] == "modelling")["attempts"]


def test_the_model_with_the_best_validation_wins_whatever_the_ranking(store, embedder, churn_csv):
    planned = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder,
                   choices=NUMERIC_PREPARATION).pipeline
    position = _search_exactly(store, planned, ["decision_tree_classifier", "gradient_boosting_classifier"],
                               {"decision_tree_classifier": {"max_depth": 1}})  # a stump, ranked first
    outcome = run_in_process(planned, churn_csv, LocalRuntime(), store)
    assert outcome["status"] == "completed", outcome["error"]
    search = outcome["trace"]["search"][str(position)]
    stump, booster = search["candidates"]
    assert search["winner"] == "gradient_boosting_classifier", search
    assert booster["validation_score"] > stump["validation_score"] > stump["validation_baseline"]
    assert search["metric"] == "roc_auc" and "best validation roc_auc" in search["reason"]
    assert [t["status"] for t in _modelling_tries(outcome)] == ["skipped", "completed"]
    assert _modelling_tries(outcome)[0]["decision"]["action"] == "outperformed"


def test_a_failed_candidate_is_one_fewer_to_choose_from(store, embedder, churn_csv):
    planned = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder,
                   choices=NUMERIC_PREPARATION).pipeline
    position = _search_exactly(store, planned, ["svm_classifier", "logistic_regression"],
                               {"svm_classifier": {"max_rows": 50}})  # refuses 1,125 training rows
    outcome = run_in_process(planned, churn_csv, LocalRuntime(), store)
    assert outcome["status"] == "completed", outcome["error"]
    search = outcome["trace"]["search"][str(position)]
    assert search["winner"] == "logistic_regression"
    assert outcome["trace"]["answer"].startswith("Predicts churn (binary classification) with logistic_regression")
    assert "max_rows" in search["candidates"][0]["error"] or "too slow" in search["candidates"][0]["error"]
    assert [t["status"] for t in _modelling_tries(outcome)] == ["failed", "completed"]


def test_a_table_nothing_learns_from_fails_the_run_saying_so(store, embedder, tmp_path):
    rng = np.random.default_rng(3)
    noise = pd.DataFrame(rng.normal(size=(300, 4)), columns=["sensor_a", "sensor_b", "sensor_c", "sensor_d"])
    noise["crop_yield"] = rng.normal(50, 5, size=300)
    path = tmp_path / "noise.csv"
    noise.to_csv(path, index=False)
    planned = plan(path, "predict the crop yield", settings=store, embedder=embedder).pipeline
    assert planned.task_type == "regression" and planned.valid
    outcome = run_in_process(planned, path, LocalRuntime(), store)
    assert outcome["status"] == "failed"
    assert "no better than the trivial baseline" in outcome["error"], outcome["error"]
    assert {t["error_class"] for t in _modelling_tries(outcome)} == {"no_better_than_baseline"}
