"""Fixtures for pipeline runs: a real churn sample, and a runner that runs a stored pipeline as its Airflow DAG
(``dag.test()`` in a child process, as ``dagsmith run`` does)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from dagsmith import datasets
from dagsmith.airflow.local import start_dag_test
from dagsmith.config import Settings
from dagsmith.execution.specs import write_spec
from dagsmith.models.catalog import Stage
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from tests.processes import processes_naming


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


def run_dag(settings: Settings, pipeline_id: int, dataset: Path, *, runtime: str = "local",
            variables: dict[str, str] | None = None) -> dict:
    """Run the stored pipeline as its Airflow DAG, retrying after 0.1 s; its summary (the ``finish`` task's XCom)
    with the execution's trace, the run's Airflow state and its log. The run must leave no process behind."""
    write_spec(pipeline_id, settings, retry_delay_seconds=0.1)
    log = settings.home / "logs" / f"airflow-{pipeline_id}-{len(list(settings.home.glob('logs/*')))}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as output:
        process = start_dag_test(pipeline_id, {"dataset": str(dataset), "runtime": runtime, "user": "ana"},
                                 settings, output, variables=variables)
        process.wait(timeout=900)
    # nothing of the run outlives it: not the pool of a listener (OpenLineage's), nor a step's process
    assert not processes_naming(str(process.result_file)), "the run left processes behind"
    ended = process.result()
    assert ended is not None and ended.summary is not None, log.read_text()[-4000:]
    with session_scope(settings) as session:
        trace = session.get(schema.Execution, ended.summary.execution_id).trace
    return {**ended.summary.model_dump(mode="json"), "state": ended.state, "trace": trace,
            "workspace": Path(ended.summary.workspace), "log": log}
