"""Fixtures for pipeline runs: a real churn sample, and a runner that drives a stored pipeline step by step the
way Airflow's tries and retries do (without Airflow)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import select

from dagsmith import datasets
from dagsmith.config import Settings
from dagsmith.execution.driver import run_pipeline
from dagsmith.models.catalog import Stage
from dagsmith.models.execution import StepResult
from dagsmith.models.plan import PipelineSpec
from dagsmith.runtime.base import Runtime
from dagsmith.store import schema


@pytest.fixture(scope="module")
def churn_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "churn.csv"
    datasets.load("wa_churn").head(1500).to_csv(path, index=False)
    return path


#: Choices that keep an encoder and an imputer before the model (the builder leaves both to a native top model),
#: for tests that swap in models reading numbers only.
NUMERIC_PREPARATION = {Stage.ENCODING: "onehot_encoder", Stage.IMPUTATION: "median_imputer"}


def service_id(session, name: str) -> int:
    return session.scalar(select(schema.Microservice.id).where(schema.Microservice.name == name))


def run_in_process(planned: PipelineSpec, dataset, runtime: Runtime, settings: Settings,
                   on_step: Callable[[StepResult], None] | None = None) -> dict:
    """Run the stored pipeline step by step with the tries its DAG would give; returns summary and trace."""
    return run_pipeline(planned.id, str(dataset), runtime=runtime, settings=settings, user="ana", on_step=on_step)
