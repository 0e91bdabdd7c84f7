"""Self-healing for each failure class: the failing service's error is read, the next-ranked candidate runs
on the same input, the decision is recorded, and the run completes. Services that fail are real code
uploaded through the normal upload path (tests/data/faulty) or real catalog services fed data they refuse.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from sqlalchemy import select

from dagsmith import datasets
from dagsmith.agents.planner import plan
from dagsmith.catalog.upload import add
from dagsmith.runtime import WRAPPER_VARIABLE
from dagsmith.runtime.base import Invocation, InvocationResult, Runtime
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from tests.conftest import ROOT
from tests.execution.conftest import NUMERIC_PREPARATION, run_dag, service_id

FAULTY = ROOT / "tests" / "data" / "faulty"


def _set_step(settings, planned, stage: str, service: str, alternatives: list[str], *, params=None,
              depends_on_stage: str | None = None) -> None:
    """Make ``stage`` run ``service`` first, with ``alternatives`` as its ranked candidates."""
    by_stage = {s.stage: s for s in planned.steps}
    with session_scope(settings) as session:
        step = session.scalar(select(schema.PipelineStep).where(
            schema.PipelineStep.pipeline_id == planned.id, schema.PipelineStep.position == by_stage[stage].position))
        if depends_on_stage:
            step.depends_on = by_stage[depends_on_stage].depends_on
        step.microservice_id = service_id(session, service)
        step.params, step.search = params or {}, {}  # one service, no model search: the step healing repairs
        step.alternatives = [{"id": service_id(session, name), "name": name} for name in alternatives]


def _attempts(outcome: dict, stage: str) -> list[dict]:
    return next(s for s in outcome["trace"]["steps"] if s["stage"] == stage)["attempts"]


@pytest.fixture(scope="module")
def tumours_csv(tmp_path_factory):
    """Breast cancer measurements without the diagnosis; several columns hold exact zeros."""
    path = tmp_path_factory.mktemp("data") / "tumours.csv"
    datasets.load("breast_cancer").drop(columns=["diagnosis"]).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("faulty, error_class", [
    ("scaler_needing_columns", "missing_parameter_or_column"),  # KeyError: 'columns'
    ("log_scaler", "numerical_instability"),                    # log(0) = -inf, caught between steps
    ("legacy_imputing_scaler", "environment"),                  # ImportError: sklearn.preprocessing.Imputer
])
def test_an_uploaded_scaler_that_fails_is_replaced_by_the_next_candidate(store, embedder, tumours_csv, tmp_path,
                                                                        faulty, error_class):
    result = add(FAULTY / faulty, store, embedder)
    assert result.outcome != "rejected", result.findings
    planned = plan(tumours_csv, "group the tumours into clusters", settings=store, embedder=embedder).pipeline
    assert "scaling" in [s.stage for s in planned.steps]
    _set_step(store, planned, "scaling", faulty, ["standard_scaler", "robust_scaler"])
    outcome = run_dag(store, planned.id, tumours_csv)
    assert outcome["status"] == "completed"
    attempts = _attempts(outcome, "scaling")
    assert [(a["status"], a["error_class"]) for a in attempts] == [("failed", error_class), ("completed", None)]
    assert attempts[0]["decision"]["action"] == "substitute"
    assert attempts[0]["decision"]["to_name"] == "standard_scaler"


def test_a_type_mismatch_is_healed_by_a_model_that_reads_text(store, embedder, churn_csv):
    """The model is fed the table before encoding: a numeric-only forest fails, a native-categorical one works."""
    planned = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder,
                   choices=NUMERIC_PREPARATION).pipeline
    _set_step(store, planned, "modelling", "random_forest_classifier", ["gradient_boosting_classifier"],
              params={"n_estimators": 50}, depends_on_stage="encoding")
    outcome = run_dag(store, planned.id, churn_csv)
    assert outcome["status"] == "completed"
    attempts = _attempts(outcome, "modelling")
    assert [a["error_class"] for a in attempts] == ["type_shape_mismatch", None]
    assert attempts[0]["decision"]["to_name"] == "gradient_boosting_classifier"
    assert "n_estimators" not in attempts[0]["decision"]["params"]  # the substitute reads no such parameter


#: What ``dropping`` drops, as JSON: the service, how many of its invocations and the folder counting them.
DROPS_VARIABLE = "DAGSMITH_TEST_DROPS"


def dropping(inner: Runtime) -> Runtime:
    """Fault injection in the run's process (``runtime.WRAPPER_VARIABLE``): the container API drops the connection
    on the first invocations of a service; each task try makes its runtime anew, so a folder counts them."""
    given = json.loads(os.environ[DROPS_VARIABLE])
    return _DroppedConnection(inner, given["service"], given["drops"], Path(given["folder"]))


class _DroppedConnection:
    name = "local"

    def __init__(self, inner: Runtime, service: str, drops: int, folder: Path):
        self.inner, self.service, self.drops, self.folder = inner, service, drops, folder

    def run(self, invocation: Invocation) -> InvocationResult:
        dropped = len(list(self.folder.glob("drop-*")))
        if invocation.service == self.service and dropped < self.drops:
            (self.folder / f"drop-{dropped}").touch()
            return InvocationResult(1, "", "ConnectionResetError: [Errno 104] Connection reset by peer", 0.01)
        return self.inner.run(invocation)


@pytest.mark.parametrize("drops, expected", [
    (1, [("failed", "retry"), ("completed", None)]),                   # the same service runs again
    (2, [("failed", "retry"), ("failed", "substitute"), ("completed", None)]),  # twice the same: move on
])
def test_transient_errors_retry_the_same_service_then_stop_early(store, embedder, tumours_csv, drops, expected,
                                                                  tmp_path):
    planned = plan(tumours_csv, "group the tumours into clusters", settings=store, embedder=embedder).pipeline
    _set_step(store, planned, "scaling", "robust_scaler", ["standard_scaler"])
    drops = {DROPS_VARIABLE: json.dumps({"service": "robust_scaler", "drops": drops, "folder": str(tmp_path)}),
             WRAPPER_VARIABLE: f"{__name__}:{dropping.__name__}",
             "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}  # this module, there
    outcome = run_dag(store, planned.id, tumours_csv, variables=drops)
    assert outcome["status"] == "completed"
    attempts = _attempts(outcome, "scaling")
    assert [(a["status"], (a["decision"] or {}).get("action")) for a in attempts] == expected
    assert attempts[0]["error_class"] == "transient"
