"""Closing runs their worker abandoned: a run still 'running' with no activity for longer than any live run is
quiet.

A live run always has activity within a step's timeout: every try is stopped by its runtime at that timeout, and
the next try or step starts seconds later. A run whose last try started (or ended) longer ago than ``idle`` was
left by a worker that died for good (kill -9 of a ``dagsmith run``, a machine lost with no retry left). Its
tries still marked running are closed as lost, and the run fails with that reason, so nothing stays 'running'
forever. When Airflow does retry, ``run.close_lost_tries`` resumes the run instead; this is for the rest.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select

from dagsmith.config import Settings
from dagsmith.healing.classify import ErrorClass
from dagsmith.store import schema
from dagsmith.store.db import session_scope

#: What a try that never reported back is recorded as: its worker was killed or lost, not the service's fault.
LOST_TRY = "the try running it ended without reporting back (its worker was killed or lost)"
#: Quiet time after which a running run is abandoned: well over a step's timeout (15 min) plus queueing.
IDLE = timedelta(hours=1)


def reap_abandoned(settings: Settings, idle: timedelta = IDLE) -> list[int]:
    """Fail the runs with no activity for ``idle``; returns their execution ids."""
    now = datetime.now(UTC)
    last_activity = (select(schema.StepAttempt.execution_id,
                            func.max(func.coalesce(schema.StepAttempt.finished_at, schema.StepAttempt.started_at))
                            .label("at"))
                     .group_by(schema.StepAttempt.execution_id).subquery())
    with session_scope(settings) as session:
        abandoned = session.scalars(
            select(schema.Execution)
            .outerjoin(last_activity, last_activity.c.execution_id == schema.Execution.id)
            .where(schema.Execution.status == "running",
                   func.coalesce(last_activity.c.at, schema.Execution.started_at) < now - idle)
            .with_for_update(of=schema.Execution, skip_locked=True)).all()
        for execution in abandoned:
            for attempt in session.scalars(select(schema.StepAttempt).where(
                    schema.StepAttempt.execution_id == execution.id, schema.StepAttempt.status == "running")):
                attempt.status, attempt.finished_at = "failed", now
                attempt.error_class, attempt.error_text = ErrorClass.TRANSIENT.value, LOST_TRY
            for step in session.scalars(select(schema.PipelineStep).where(
                    schema.PipelineStep.pipeline_id == execution.pipeline_id, schema.PipelineStep.status == "running")):
                step.status = "failed"
            minutes = int(idle.total_seconds() // 60)
            execution.status, execution.finished_at = "failed", now
            execution.error = f"abandoned: no activity for over {minutes} minutes (the worker running it stopped)"
            pipeline = session.get(schema.Pipeline, execution.pipeline_id)
            if pipeline.status == "running":
                pipeline.status = "failed"
        return [execution.id for execution in abandoned]
