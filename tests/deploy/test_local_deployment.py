"""dagsmith deployed on a real Airflow (api-server, scheduler, dag-processor, triggerer), driven as an upstream
system drives it: a JWT from /auth/token, the meta-DAG triggered through the REST API with a dataset and a goal,
the built pipeline's DAG registered and run, re-triggered with a new dataset, and run by its schedule."""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request

import pytest
from sqlalchemy import select

from dagsmith import datasets
from dagsmith.airflow.serve import LocalDeployment
from dagsmith.config import Settings
from dagsmith.execution.specs import dag_id
from dagsmith.store import schema
from dagsmith.store.databases import scratch_database
from dagsmith.store.db import session_scope

META_DAG = "dagsmith_build_pipeline"
FINISHED = {"success", "failed"}


class Api:
    """The REST API as an upstream system uses it: bearer token, JSON in and out."""

    def __init__(self, base: str, user: str, password: str):
        self.base = base
        self.token = self.call("POST", "/auth/token", {"username": user, "password": password})["access_token"]

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        request = urllib.request.Request(self.base + path, method=method,
                                         data=json.dumps(body).encode() if body is not None else None,
                                         headers={"Content-Type": "application/json",
                                                  **({"Authorization": f"Bearer {self.token}"}
                                                     if getattr(self, "token", None) else {})})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read() or b"{}")

    def trigger(self, dag: str, conf: dict) -> str:
        return self.call("POST", f"/api/v2/dags/{dag}/dagRuns", {"logical_date": None, "conf": conf})["dag_run_id"]

    def wait(self, dag: str, run_id: str, timeout: float = 900) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            state = self.call("GET", f"/api/v2/dags/{dag}/dagRuns/{run_id}")["state"]
            if state in FINISHED:
                return state
            time.sleep(5)
        raise AssertionError(f"{dag} run {run_id} still not finished after {timeout:.0f} s")

    def runs(self, dag: str) -> list[dict]:
        return self.call("GET", f"/api/v2/dags/{dag}/dagRuns?order_by=-start_date")["dag_runs"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def deployment(catalog_settings, server_home, tmp_path):
    with scratch_database(Settings(home=server_home, database_url=None)) as metadata:
        served = LocalDeployment(Settings(home=tmp_path / "home", database_url=catalog_settings.database_url),
                                 port=_free_port(), runtime="local", metadata_url=metadata.database_url,
                                 refresh_seconds=5)
        with served:
            yield served


def _logs(deployment: LocalDeployment) -> str:
    return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(deployment.logs.glob("*.log")))


def test_an_upstream_system_builds_runs_reruns_and_schedules_a_pipeline_through_the_rest_api(deployment, catalog_settings,
                                                                                             tmp_path):
    penguins = datasets.load("penguins")
    first, second = tmp_path / "penguins.csv", tmp_path / "penguins-2008.csv"
    penguins.to_csv(first, index=False)
    penguins[penguins["year"] == 2008].to_csv(second, index=False)
    login = deployment.login()
    with pytest.raises(urllib.error.HTTPError) as refused:
        Api(deployment.url, login.user, "not-the-password")
    assert refused.value.code == 401
    api = Api(deployment.url, login.user, login.password)

    run = api.trigger(META_DAG, {"dataset": str(first), "goal": "predict the species", "user": "upstream",
                                 "schedule": "* * * * *"})
    assert api.wait(META_DAG, run) == "success", _logs(deployment)
    with session_scope(catalog_settings) as session:
        pipeline = session.scalars(select(schema.Pipeline).where(schema.Pipeline.owner == "upstream")
                                   .order_by(schema.Pipeline.id.desc())).first()
        pipeline_id = pipeline.id
    child = dag_id(pipeline_id)
    registered = api.call("GET", f"/api/v2/dags/{child}")
    assert registered["is_paused"] is False and registered["timetable_summary"] == "* * * * *"
    tasks = [t["task_id"] for t in api.call("GET", f"/api/v2/dags/{child}/tasks")["tasks"]]
    assert any(t.startswith("step_") and t.endswith("__tabular_loader") for t in tasks), tasks
    runs = api.runs(child)
    assert any(r["run_type"] == "operator_triggered" and r["state"] == "success" for r in runs), [  # the meta-DAG's
        (r["dag_run_id"], r["run_type"], r["state"]) for r in runs]

    rerun = api.trigger(child, {"dataset": str(second), "user": "upstream"})
    assert api.wait(child, rerun) == "success", _logs(deployment)
    with session_scope(catalog_settings) as session:
        executions = session.scalars(select(schema.Execution).where(schema.Execution.pipeline_id == pipeline_id)).all()
        assert {e.dataset for e in executions} >= {str(first), str(second)}

    deadline = time.monotonic() + 300
    while not any(r["run_type"] == "scheduled" and r["state"] in FINISHED for r in api.runs(child)):
        assert time.monotonic() < deadline, f"no scheduled run finished: {api.runs(child)}\n{_logs(deployment)}"
        time.sleep(10)
    scheduled = next(r for r in api.runs(child) if r["run_type"] == "scheduled" and r["state"] in FINISHED)
    assert scheduled["state"] == "success", _logs(deployment)
