"""Fixtures for pipeline runs: a database holding the shipped catalog, a real churn sample, and a runner
that drives a stored pipeline step by step the way Airflow's tries and retries do (without Airflow)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from dagsmith import datasets
from dagsmith.catalog.upload import sync
from dagsmith.config import Settings
from dagsmith.execution import run as execution
from dagsmith.models.plan import PipelineSpec
from dagsmith.runtime.base import Runtime
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from tests.conftest import CATALOG


@pytest.fixture
def store(settings, embedder):
    sync(CATALOG, settings, embedder)
    return settings


@pytest.fixture(scope="module")
def churn_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "churn.csv"
    datasets.load("wa_churn").head(1500).to_csv(path, index=False)
    return path


def service_id(session, name: str) -> int:
    return session.scalar(select(schema.Microservice.id).where(schema.Microservice.name == name))


def run_in_process(planned: PipelineSpec, dataset, runtime: Runtime, settings: Settings, tries: int = 4) -> dict:
    """Run every step with up to ``tries`` tries each, as the child DAG's tasks would; returns the trace."""
    execution_id = execution.start(planned.id, str(dataset), user="ana", run_id=None, settings=settings)
    for step in planned.steps:
        for _ in range(tries):
            try:
                execution.run_step(execution_id, step.position, runtime=runtime, settings=settings)
                break
            except execution.StepFailed:
                continue
            except execution.CandidatesExhausted:
                break
    summary = execution.finish(execution_id, settings=settings)
    with session_scope(settings) as session:
        return {**summary, "trace": session.get(schema.Execution, execution_id).trace}
