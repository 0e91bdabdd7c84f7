"""Closing what a dead worker left 'running': its tries, its run, and the containers or pods it started.

A try is alive while its worker beats: the process running a step stamps the try's ``heartbeat_at`` every
``heartbeat_seconds`` (``heartbeat.beating``). A try silent for ``STALE_BEATS`` beats was left by a worker that
died (kill -9, the kernel's OOM killer, a lost machine); it is closed as failed, ``transient``, "worker died: no
heartbeat since ...", and its run fails with that reason. Why a heartbeat: a recorded pid says nothing about a
worker on another machine (Airflow's workers are anywhere; the reaper runs wherever the next run starts) and
pids are reused; a staleness limit on the try alone must exceed the longest step (the 15 min timeout), so a
death would be noticed an hour late. Beats are written by the worker itself, in database time, and notice a
death within a minute by default. A hung worker still beats: the runtime's timeout handles a hung service.

A run whose worker died between steps has no try to go stale; it fails after ``IDLE`` without activity.

A run the local CLI started ends with its CLI: when the CLI is stopped (Ctrl-C, SIGTERM) or killed, its Airflow
run notices at once (``airflow.watch``) and closes itself with ``interrupt``, without waiting for beats to go stale.

When Airflow does retry the task (its scheduler notices the dead worker too), the next try closes the lost try
itself (``attempts.close_lost_tries``), reopens the run and resumes it; the reaper is for the runs nobody resumes.
Reaping happens at every run start and on ``dagsmith pipelines reap``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import exists, func, select
from sqlalchemy.orm import Session

from dagsmith.config import Settings
from dagsmith.healing.classify import ErrorClass
from dagsmith.models.execution import StepStatus
from dagsmith.models.plan import PipelineStatus
from dagsmith.execution.workspace import Workspace
from dagsmith.runtime import sandbox
from dagsmith.runtime.base import RuntimeUnavailable
from dagsmith.store import schema
from dagsmith.store.db import session_scope, stored

logger = logging.getLogger(__name__)
#: Missed beats after which a try's worker is taken for dead: enough to ride out a busy machine or a restarting
#: database (a beat that fails is retried at the next one).
STALE_BEATS = 6
#: Quiet time after which a run with no try running is abandoned: well over a retry's backoff and queueing.
IDLE = timedelta(hours=1)
#: How the reason of a run stopped with its CLI starts: such a run is over, never resumed.
INTERRUPTED = "interrupted: "
#: The container label naming the try a container runs (its ``StepAttempt.container_label``), set by
#: ``attempts.run_try``, read here to remove leftovers.
ATTEMPT_LABEL = "dagsmith.attempt"


@dataclass(frozen=True)
class Reaped:
    tries: list[int]  # step attempt ids closed as lost
    runs: list[int]  # execution ids failed
    containers: int  # containers and pods of lost tries removed


def lost_reason(attempt: schema.StepAttempt) -> str:
    """Why a try that never reported back failed: its worker's last sign of life."""
    last = (attempt.heartbeat_at or attempt.started_at).astimezone(UTC)
    return f"worker died: no heartbeat since {last:%Y-%m-%d %H:%M:%S} UTC (its process was killed or its machine lost)"


def close_lost(attempt: schema.StepAttempt, now: datetime, reason: str | None = None) -> None:
    """Close a try its worker left 'running' (or stopped, saying ``reason``); transient, so healing retries the same
    service."""
    attempt.error_class, attempt.error_text = ErrorClass.TRANSIENT.value, reason or lost_reason(attempt)
    attempt.status, attempt.finished_at = StepStatus.FAILED, now


def interrupt(execution_id: int, reason: str, settings: Settings) -> bool:
    """Close a run that was stopped while running: its running tries and the run fail with ``reason``, and the
    tries' containers are removed. False when the run was no longer running."""
    with session_scope(settings) as session:
        now: datetime = session.execute(select(func.now())).scalar_one()
        run = session.get(schema.Execution, execution_id, with_for_update=True)
        if run is None or run.status != PipelineStatus.RUNNING:
            return False
        running = session.scalars(select(schema.StepAttempt).where(schema.StepAttempt.execution_id == execution_id,
                                                                   schema.StepAttempt.status == StepStatus.RUNNING))
        labels = []
        for attempt in running:
            close_lost(attempt, now, reason)
            stored(session, schema.PipelineStep, attempt.step_id).status = StepStatus.FAILED
            labels.append(attempt.container_label)
        fail_run(session, run, now, reason)
    if labels:
        _remove_leftovers(labels, settings)
    return True


def reap(settings: Settings, idle: timedelta = IDLE) -> Reaped:
    """Close the tries whose worker stopped beating and fail their runs, fail runs idle for ``idle``, and remove
    the lost tries' containers."""
    stale = timedelta(seconds=settings.heartbeat_seconds * STALE_BEATS)
    with session_scope(settings) as session:
        now: datetime = session.execute(select(func.now())).scalar_one()
        lost = session.scalars(select(schema.StepAttempt).where(
            schema.StepAttempt.status == StepStatus.RUNNING,
            func.coalesce(schema.StepAttempt.heartbeat_at, schema.StepAttempt.started_at) < now - stale)
            .order_by(schema.StepAttempt.id).with_for_update(skip_locked=True)).all()
        reasons: dict[int, str | None] = {}
        for attempt in lost:
            close_lost(attempt, now)
            reasons.setdefault(attempt.execution_id, attempt.error_text)
            step = stored(session, schema.PipelineStep, attempt.step_id)
            if step.status == StepStatus.RUNNING:
                step.status = StepStatus.FAILED
        session.flush()
        runs = _abandoned_runs(session, now, idle, set(reasons))
        minutes = int(idle.total_seconds() // 60)
        for run in runs:
            fail_run(session, run, now, reasons.get(run.id) or
                  f"abandoned: no activity for over {minutes} minutes (the worker running it stopped)")
        tries, failed = [a.id for a in lost], [r.id for r in runs]
        left = Leftovers.of(session, lost)
    return Reaped(tries, failed, left.remove(settings))


@dataclass(frozen=True)
class Leftovers:
    """What lost tries may have left running: the folders their sandboxes write to, and their containers' labels."""

    outputs: list[Path]
    labels: list[str]

    @classmethod
    def of(cls, session: Session, lost: Sequence[schema.StepAttempt]) -> Leftovers:
        return cls([folder for attempt in lost if (folder := _output_of(session, attempt)) is not None],
                   [attempt.container_label for attempt in lost])

    def remove(self, settings: Settings) -> int:
        """Kill this machine's sandboxes writing to the outputs (a worker killed while bwrap set one up can leave it
        waiting for ever, out of reach of ``--die-with-parent``) and remove the containers; how many containers and
        pods were removed."""
        if self.outputs:
            sandbox.kill_writing_to(self.outputs)
        return _remove_leftovers(self.labels, settings) if self.labels else 0


def _output_of(session: Session, attempt: schema.StepAttempt) -> Path | None:
    """Where a try wrote (None for a run without a workspace)."""
    workspace = stored(session, schema.Execution, attempt.execution_id).workspace
    if not workspace:
        return None
    position = stored(session, schema.PipelineStep, attempt.step_id).position
    return Workspace(Path(workspace)).attempt_output(position, attempt.attempt)


def _abandoned_runs(session: Session, now: datetime, idle: timedelta, orphaned: set[int]) -> list[schema.Execution]:
    """Running runs with no try running that either just lost a try, or show no activity for ``idle``."""
    attempts = schema.StepAttempt
    last_activity = (select(attempts.execution_id,
                            func.max(func.coalesce(attempts.finished_at, attempts.heartbeat_at, attempts.started_at))
                            .label("at"))
                     .group_by(attempts.execution_id).subquery())
    alive = exists().where(attempts.execution_id == schema.Execution.id, attempts.status == StepStatus.RUNNING)
    quiet = func.coalesce(last_activity.c.at, schema.Execution.started_at) < now - idle
    return list(session.scalars(
        select(schema.Execution)
        .outerjoin(last_activity, last_activity.c.execution_id == schema.Execution.id)
        .where(schema.Execution.status == PipelineStatus.RUNNING, ~alive, schema.Execution.id.in_(orphaned) | quiet)
        .order_by(schema.Execution.id).with_for_update(of=schema.Execution, skip_locked=True)))


def fail_run(session: Session, run: schema.Execution, now: datetime, reason: str) -> None:
    """Close a run as failed, and its pipeline with it unless another of its runs is still going."""
    run.status, run.finished_at, run.error = PipelineStatus.FAILED, now, reason
    run.seconds = (now - run.started_at).total_seconds()
    others = session.scalar(select(func.count()).where(schema.Execution.pipeline_id == run.pipeline_id,
                                                       schema.Execution.status == PipelineStatus.RUNNING,
                                                       schema.Execution.id != run.id))
    pipeline = stored(session, schema.Pipeline, run.pipeline_id)
    if pipeline.status == PipelineStatus.RUNNING and not others:
        pipeline.status = PipelineStatus.FAILED


def _remove_leftovers(labels: list[str], settings: Settings) -> int:
    """Remove the containers the lost tries started (still running, or stopped and never removed) when the container
    engine answers, and their pods when the kubernetes runtime is set up; the local runtime's services die with
    their worker instead (``reap`` kills what a worker killed mid set-up left). Returns how many were removed."""
    from dagsmith.runtime.docker import DockerRuntime
    from dagsmith.runtime.kubernetes import KubernetesRuntime

    removed = 0
    try:
        removed += DockerRuntime().remove_labelled(ATTEMPT_LABEL, labels)
    except RuntimeUnavailable as exc:
        logger.info("no container of a lost try removed: %s", exc)
    if settings.pods.claim:
        try:
            removed += KubernetesRuntime(settings.pods, settings.home).remove_labelled(ATTEMPT_LABEL, labels)
        except Exception:  # a cluster that does not answer, or no credentials here: the pods' deadlines end them
            logger.warning("the pods of lost tries %s could not be deleted", labels, exc_info=True)
    return removed
