"""Store records for tests that need a run without running one."""

from __future__ import annotations

from dagsmith.config import Settings
from dagsmith.store import schema
from dagsmith.store.db import session_scope


def one_running_try(settings: Settings) -> tuple[int, int]:
    """A run with one try running, as ``run_step`` records it (ids of the run and the try), in one transaction."""
    with session_scope(settings) as session:
        pipeline = schema.Pipeline(name="beats", goal="predict y", owner="ana", dataset="d.csv", status="running")
        session.add(pipeline)
        session.flush()
        step = schema.PipelineStep(pipeline_id=pipeline.id, position=0, stage="modelling", status="running")
        run = schema.Execution(pipeline_id=pipeline.id, owner="ana", status="running", dataset="d.csv")
        session.add_all([step, run])
        session.flush()
        attempt = schema.StepAttempt(execution_id=run.id, step_id=step.id, attempt=1, status="running")
        session.add(attempt)
        session.flush()
        return run.id, attempt.id
