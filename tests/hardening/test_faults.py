"""Faults during a run: the worker killed mid-step (kill -9), the database dropping every connection between
steps, a workspace whose disk is full. Runs resume or fail with a clear reason, and no try stays 'running'."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time

import pytest
from sqlalchemy import create_engine, select, text
from sqlalchemy.pool import NullPool

from dagsmith.agents.planner import plan
from dagsmith.execution import run as execution
from dagsmith.execution.driver import run_pipeline
from dagsmith.execution.reaper import reap_abandoned
from dagsmith.healing.classify import ErrorClass
from dagsmith.runtime import runtime_named
from dagsmith.store import schema
from dagsmith.store.db import get_engine, session_scope

#: A workspace disk that holds the input but not everything the steps write.
DISK_BYTES = 900 * 1024
#: Runs a stored pipeline step by step in a process of its own, as an Airflow worker would.
WORKER = """
import sys
from dagsmith.config import Settings
from dagsmith.execution import run as execution
from dagsmith.runtime import runtime_named
settings = Settings(home=__import__("pathlib").Path(sys.argv[1]), database_url=sys.argv[2])
execution_id = execution.start(int(sys.argv[3]), sys.argv[4], user="worker", run_id=None, settings=settings)
print(execution_id, flush=True)
for position in range(int(sys.argv[5])):
    execution.run_step(execution_id, position, runtime=runtime_named("local", settings), settings=settings)
"""


def _running_attempt(settings, execution_id: int) -> schema.StepAttempt | None:
    with session_scope(settings) as session:
        return session.scalar(select(schema.StepAttempt).where(schema.StepAttempt.execution_id == execution_id,
                                                               schema.StepAttempt.status == "running"))


def test_a_worker_killed_mid_step_leaves_no_try_running_and_the_run_resumes(store, churn_csv, embedder):
    planned = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder).pipeline
    worker = subprocess.Popen([sys.executable, "-c", WORKER, str(store.home), store.database_url, str(planned.id),
                               str(churn_csv), str(len(planned.steps))], stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    execution_id = int(worker.stdout.readline())
    deadline = time.monotonic() + 300
    while (attempt := _running_attempt(store, execution_id)) is None or attempt.attempt != 1 or \
            _step_stage(store, attempt.step_id) != "modelling":
        assert worker.poll() is None and time.monotonic() < deadline, "the worker never reached the model"
        time.sleep(0.05)
    os.killpg(worker.pid, signal.SIGKILL)  # the worker and the service it runs, as a lost machine would
    worker.wait()
    killed = attempt

    # Airflow's next try of the task (its scheduler notices the dead worker) resumes the same execution.
    runtime = runtime_named("local", store)
    with session_scope(store) as session:
        steps = session.scalars(select(schema.PipelineStep).where(schema.PipelineStep.pipeline_id == planned.id)
                                .order_by(schema.PipelineStep.position)).all()
        pending = [s.position for s in steps if s.status != "completed"]
    for position in pending:
        for _ in range(3):
            try:
                execution.run_step(execution_id, position, runtime=runtime, settings=store)
                break
            except execution.StepFailed:
                continue
    summary = execution.finish(execution_id, settings=store)
    assert summary["status"] == "completed", summary
    with session_scope(store) as session:
        lost = session.get(schema.StepAttempt, killed.id)
        assert (lost.status, lost.error_class, lost.error_text) == ("failed", ErrorClass.TRANSIENT.value,
                                                                     execution.LOST_TRY)
        assert lost.decision["action"] == "retry"  # not the service's fault: the same service runs again
        assert session.scalar(select(schema.StepAttempt).where(schema.StepAttempt.status == "running")) is None


def test_a_run_whose_worker_never_came_back_is_closed_with_the_reason(store, churn_csv, embedder):
    planned = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder).pipeline
    abandoned = execution.start(planned.id, str(churn_csv), user="ana", run_id=None, settings=store)
    runtime = runtime_named("local", store)
    execution.run_step(abandoned, 0, runtime=runtime, settings=store)
    with session_scope(store) as session:  # a second step's try was running when its worker died, long ago
        step = session.scalar(select(schema.PipelineStep).where(schema.PipelineStep.pipeline_id == planned.id,
                                                                schema.PipelineStep.position == 1))
        session.add(schema.StepAttempt(execution_id=abandoned, step_id=step.id, attempt=1, status="running",
                                       microservice_id=step.microservice_id))
        step.status = "running"
    assert reap_abandoned(store) == []  # quiet for seconds only: it may still be alive
    with session_scope(store) as session:
        session.execute(text("UPDATE step_attempts SET started_at = started_at - interval '2 hours', "
                             "finished_at = finished_at - interval '2 hours' WHERE execution_id = :e"),
                        {"e": abandoned})
    env = {**os.environ, "DAGSMITH_DATABASE_URL": store.database_url, "DAGSMITH_HOME": str(store.home)}
    reaped = subprocess.run([sys.executable, "-m", "dagsmith.cli.app", "pipelines", "reap"], capture_output=True,
                            text=True, env=env, timeout=120)
    assert reaped.returncode == 0 and f"closed 1 abandoned run(s): {abandoned}" in reaped.stdout, reaped.stderr
    with session_scope(store) as session:
        closed = session.get(schema.Execution, abandoned)
        assert closed.status == "failed" and closed.error.startswith("abandoned: no activity for over 60 minutes")
        assert session.scalar(select(schema.StepAttempt).where(schema.StepAttempt.status == "running")) is None
        assert session.get(schema.Pipeline, planned.id).status == "failed"
    rerun = run_pipeline(planned.id, str(churn_csv), runtime=runtime, settings=store)  # rerunning is safe
    assert rerun["status"] == "completed" and rerun["execution_id"] != abandoned


def _step_stage(settings, step_id: int) -> str:
    with session_scope(settings) as session:
        return session.get(schema.PipelineStep, step_id).stage


def test_every_connection_dropped_between_steps_does_not_fail_the_run(store, churn_csv, embedder):
    planned = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder).pipeline
    outsider = create_engine(get_engine(store).url, poolclass=NullPool)  # not one of the run's own connections

    def drop_connections(_outcome: dict) -> None:
        with outsider.connect() as connection:  # what a database restart or a failover does to open connections
            dropped = connection.execute(text(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()")).scalar()
        drops.append(dropped)

    drops: list[int] = []
    outcome = run_pipeline(planned.id, str(churn_csv), runtime=runtime_named("local", store), settings=store,
                           on_step=drop_connections)
    assert outcome["status"] == "completed", outcome
    assert len(drops) == len(planned.steps) and sum(drops) > 0


def test_a_full_disk_fails_the_step_as_a_resource_error(store, churn_csv, embedder, tmp_path):
    planned = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder).pipeline
    small = tmp_path / "small"
    small.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES}", "tmpfs", str(small)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"a small filesystem cannot be mounted here: {mounted.stderr.strip()}")
    try:
        settings = dataclasses.replace(store, home=small)
        outcome = run_pipeline(planned.id, str(churn_csv), runtime=runtime_named("local", settings), settings=settings)
    finally:
        subprocess.run(["umount", "-l", str(small)], check=False)
    assert outcome["status"] == "failed"
    with session_scope(store) as session:
        attempts = session.scalars(select(schema.StepAttempt).where(
            schema.StepAttempt.execution_id == outcome["execution_id"])).all()
        assert all(a.status in ("failed", "completed") for a in attempts)  # nothing left 'running'
        assert any(a.error_class == ErrorClass.RESOURCE.value and "No space left on device" in a.error_text
                   for a in attempts), [(a.error_class, (a.error_text or "")[-200:]) for a in attempts]
