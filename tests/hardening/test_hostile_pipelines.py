"""Hostile microservices inside real pipelines (real Airflow ``dag.test()``, real sandboxes and containers).

Each hostile service is uploaded through the real upload path, then made the chosen service (or the next
alternative) of a step of a real pipeline, the original choice ranked after them. On both runtimes the run must
contain every misbehaviour: each hostile try fails with the right error class, self-healing moves on to the
next candidate, the run completes, the history records the failures, and nothing escaped: no file outside
the output folder, no network, no planted secret in any log, bundle, report, database row or error, no
container or process left behind. The single-invocation containment of each service is proven in
tests/runtime/test_containment.py; this is the same at pipeline level.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import select, text

from dagsmith import datasets
from dagsmith.agents.planner import plan
from dagsmith.catalog.upload import add
from dagsmith.config import ConfigurationError, Settings
from dagsmith.healing.classify import ErrorClass
from dagsmith.learning.patterns import load_history
from dagsmith.models.catalog import UploadOutcome
from dagsmith.runtime.base import Limits
from dagsmith.runtime.guard import memory_exceeded
from dagsmith.runtime.sandbox import UID_RANGE
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from tests.conftest import catalog_copy
from tests.execution.conftest import run_dag, service_id
from tests.processes import processes_naming
from tests.runtime.test_containment import planted_secrets
from tests.runtime.test_docker_runtime import HOSTILE, runtime as container_runtime  # noqa: F401 (a fixture)

#: Short, so the sleeper costs under a minute; long enough for a real step's container on a 2-core machine busy
#: with another test worker (at 20 s, the original splitter once timed out there and healing moved past it).
STEP_TIMEOUT_SECONDS = 45
#: Rejected by the upload scanners (their covert twins below are not, and must be contained at run time).
CAUGHT_AT_UPLOAD = {"network_probe": "imports socket", "escape_writer": "path traversal"}


@dataclass(frozen=True)
class Misbehaviour:
    service: str
    error_class: ErrorClass
    shows: str  # what the failed try's log says


HOSTILE_RUNS = [
    Misbehaviour("covert_network_probe", ErrorClass.ENVIRONMENT, "Network is unreachable"),
    Misbehaviour("input_tamperer", ErrorClass.ENVIRONMENT, "Read-only file system"),
    Misbehaviour("fork_bomb", ErrorClass.RESOURCE, "Resource temporarily unavailable"),
    Misbehaviour("sleeper", ErrorClass.RESOURCE, f"killed after the {STEP_TIMEOUT_SECONDS} s timeout"),
    Misbehaviour("introspect", ErrorClass.CONTRACT, '"environment"'),
    Misbehaviour("secret_hunter", ErrorClass.CONTRACT, '"files_read"'),
]
DOCKER = [*HOSTILE_RUNS, Misbehaviour("memory_hog", ErrorClass.RESOURCE, "out of memory"),
          Misbehaviour("covert_writer", ErrorClass.ENVIRONMENT, "Read-only file system")]
#: The local runtime's bubblewrap sandbox holds against the same services; only the kernel's words differ. A warm
#: step's address space may exceed its memory by what it inherited, so its cgroup is the limit that strikes.
LOCAL = [*HOSTILE_RUNS, Misbehaviour("memory_hog", ErrorClass.RESOURCE, memory_exceeded(Limits())),
         Misbehaviour("covert_writer", ErrorClass.ENVIRONMENT, "Permission denied")]


@pytest.fixture(scope="module")
def hostile_store(server_home, tmp_path_factory, catalog_template, embedder):
    """The shipped catalog plus every hostile service the scanners accept; the upload results by name."""
    with catalog_copy(server_home, catalog_template, tmp_path_factory.mktemp("hostile-home")) as settings:
        uploads = {folder.name: add(folder, settings, embedder) for folder in sorted(HOSTILE.iterdir())}
        yield settings, uploads


def test_the_scanners_catch_the_overt_ones_and_the_analyzer_sees_no_data_work(hostile_store):
    _, uploads = hostile_store
    for name, reason in CAUGHT_AT_UPLOAD.items():
        assert uploads[name].outcome is UploadOutcome.REJECTED
        assert any(reason in finding.message for finding in uploads[name].findings), uploads[name].findings
    for misbehaviour in DOCKER:
        upload = uploads[misbehaviour.service]
        assert upload.outcome is UploadOutcome.ADDED, upload.findings
        assert upload.analysis.summary == "Does no data work the analyzer recognises."


@pytest.mark.parametrize("value", ["0", "-5", "ten", "1.5"])
def test_step_limits_come_from_the_environment_and_bad_ones_are_named(monkeypatch, value):
    monkeypatch.setenv("DAGSMITH_STEP_TIMEOUT_SECONDS", "20")
    monkeypatch.setenv("DAGSMITH_STEP_MEMORY_MB", "1024")
    monkeypatch.setenv("DAGSMITH_STEP_OUTPUT_MB", "256")
    monkeypatch.setenv("DAGSMITH_STEP_OUTPUT_FILES", "500")
    monkeypatch.setenv("DAGSMITH_STEP_FILE_MB", "64")
    assert Settings.from_env().step_limits == Limits(timeout_seconds=20, memory_mb=1024, output_mb=256,
                                                     output_files=500, file_mb=64)
    monkeypatch.setenv("DAGSMITH_STEP_TIMEOUT_SECONDS", value)
    with pytest.raises(ConfigurationError, match=f"DAGSMITH_STEP_TIMEOUT_SECONDS must be a positive whole number, "
                                                 f"not '{value}'"):
        Settings.from_env()


def _plant(settings: Settings, pipeline_id: int, misbehaviours: list[Misbehaviour]) -> dict[int, tuple[list[str], str]]:
    """Make hostile services the chosen one and the first alternatives of the steps (spread over them), the
    original choice next (keeping the step's parameters); returns position -> (hostiles in order, original)."""
    planted = {}
    with session_scope(settings) as session:
        steps = session.scalars(select(schema.PipelineStep).where(schema.PipelineStep.pipeline_id == pipeline_id)
                                .order_by(schema.PipelineStep.position)).all()
        for step, group in zip(steps, (misbehaviours[i::len(steps)] for i in range(len(steps)))):
            if not group:
                continue
            hostiles = [service_id(session, m.service) for m in group]
            original = session.get(schema.Microservice, step.microservice_id)
            step.alternatives = [*({"id": h, "name": m.service} for h, m in zip(hostiles[1:], group[1:])),
                                 {"id": original.id, "name": original.name},
                                 *(a for a in step.alternatives if a["id"] not in {original.id, *hostiles})]
            step.microservice_id = hostiles[0]
            step.search = {}  # a modelling step runs one service at a time here, as healing swaps them
            planted[step.position] = ([m.service for m in group], original.name)
    return planted


def _record(settings: Settings, pipeline_id: int, planted: dict[int, tuple[list[str], str]]) -> dict:
    """(stage, service) -> (successes, failures) in the global history, for every planted and original service."""
    with session_scope(settings) as session:
        history = load_history(session, None)
        stages = dict(session.execute(select(schema.PipelineStep.position, schema.PipelineStep.stage)
                                      .where(schema.PipelineStep.pipeline_id == pipeline_id)).all())
        record = {}
        for position, (hostiles, original) in planted.items():
            for name in [*hostiles, original]:
                counts = history.counts(stages[position], service_id(session, name))
                record[stages[position], name] = (counts.successes, counts.failures)
        return record


def _database_text(settings: Settings) -> str:
    """Every row of every dagsmith table, as text: where a leaked secret would have been recorded."""
    with session_scope(settings) as session:
        return "\n".join(session.scalar(text(f"SELECT coalesce(json_agg(t)::text, '') FROM {table.name} t"))
                         for table in schema.Base.metadata.sorted_tables)


@pytest.mark.parametrize("runtime, misbehaviours", [("docker", DOCKER), ("local", LOCAL)])
def test_hostile_choices_are_contained_and_replaced(hostile_store, embedder, tmp_path, monkeypatch, request, runtime,
                                                   misbehaviours):
    settings, _ = hostile_store
    engine = request.getfixturevalue("container_runtime") if runtime == "docker" else None  # set up podman
    monkeypatch.setenv("DAGSMITH_STEP_TIMEOUT_SECONDS", str(STEP_TIMEOUT_SECONDS))
    data = tmp_path / "penguins.csv"
    datasets.load("penguins").to_csv(data, index=False)
    planned = plan(data, "predict the species", settings=settings, embedder=embedder).pipeline
    planted = _plant(settings, planned.id, misbehaviours)
    before = _record(settings, planned.id, planted)

    with planted_secrets(settings.home) as secret:
        outcome = run_dag(settings, planned.id, data, runtime=runtime)

    assert outcome["state"] == "success" and outcome["status"] == "completed", (outcome["error"], [
        (step["position"], [(a["microservice_id"], a["status"], a["error_class"], a["error"])
                            for a in step["attempts"]])
        for step in outcome["trace"]["steps"] if step["status"] != "completed" or len(step["attempts"]) > 1])
    workspace = outcome["workspace"]
    steps = {s["position"]: s for s in outcome["trace"]["steps"]}
    by_name = {m.service: m for m in misbehaviours}
    logs = {path.name: path.read_text() for path in (workspace / "logs").glob("*.log")}
    for position, (hostiles, original) in planted.items():
        *failed, last = steps[position]["attempts"]
        assert last["status"] == "completed" and len(failed) == len(hostiles), (hostiles, steps[position])
        for number, (attempt, hostile, then) in enumerate(zip(failed, hostiles, [*hostiles[1:], original]), 1):
            expected = by_name[hostile]
            assert (attempt["status"], attempt["error_class"]) == ("failed", expected.error_class.value), attempt
            assert attempt["decision"]["action"] == "substitute" and attempt["decision"]["to_name"] == then
            log = logs[f"{position:02d}-{number}.log"]
            assert expected.shows in log, (hostile, log[-1500:])
    after = _record(settings, planned.id, planted)
    hostile_names = {h for hostiles, _ in planted.values() for h in hostiles}
    assert {key: (a[0] - before[key][0], a[1] - before[key][1]) for key, a in after.items()} == {
        key: (0, 1) if key[1] in hostile_names else (1, 0) for key in after}

    assert not any("reached" in text or "wrote into" in text for text in logs.values())
    assert not list(workspace.rglob("tampered.txt")) and not Path("/tampered.txt").exists()
    files = b"".join(path.read_bytes() for path in workspace.rglob("*") if path.is_file() and not path.is_symlink())
    assert secret.encode() not in files  # logs, bundles, reports, plots
    assert secret not in json.dumps(outcome["trace"]) + (outcome["error"] or "") + _database_text(settings)
    assert outcome["trace"]["isolation"] == [engine.isolation if engine else "bubblewrap sandbox"]
    introspect = next(p for p, (hostiles, _) in planted.items() if "introspect" in hostiles)
    number = planted[introspect][0].index("introspect") + 1
    seen = json.loads(logs[f"{introspect:02d}-{number}.log"].split("--- stdout\n")[1].split("\n--- stderr")[0])
    assert not {"DAGSMITH_TEST_SECRET", "DAGSMITH_DATABASE_URL", "DAGSMITH_HOME"} & set(seen["environment"])
    if runtime == "docker":
        assert (seen["uid"], seen["gid"]) == (10001, 10001)
        containers = engine.api.containers(all=True, filters={"label": "dagsmith.service"})
        assert not [c["Names"] for c in containers
                    if any(str(workspace) in m.get("Source", "") for m in c.get("Mounts") or [])]
    else:
        assert seen["uid"] in UID_RANGE
    assert not processes_naming(str(workspace))
