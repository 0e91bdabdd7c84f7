"""Run events: a committed change to a run reaches a listener at once; a rolled-back one never does."""

from __future__ import annotations

import os
import time

import pytest

from dagsmith.store import schema
from dagsmith.store.db import get_engine, session_scope
from dagsmith.store.events import RunEvent, run_events


def _heard(events, timeout: float = 5.0) -> list[RunEvent]:
    """Everything announced within ``timeout`` seconds, waiting for the first notice and a short while after it."""
    heard = events.wait(timeout)
    while more := events.wait(0.2):
        heard += more
    return heard


def test_a_run_and_its_tries_are_announced_when_committed_and_never_when_rolled_back(settings):
    with run_events(get_engine(settings)) as events:
        with session_scope(settings) as session:
            pipeline = schema.Pipeline(name="events", goal="predict y", owner="ana", dataset="d.csv", status="running")
            session.add(pipeline)
            session.flush()
            step = schema.PipelineStep(pipeline_id=pipeline.id, position=0, stage="modelling", status="running")
            run = schema.Execution(pipeline_id=pipeline.id, owner="ana", status="running", dataset="d.csv")
            session.add_all([step, run])
            session.flush()
            run_id, step_id, pipeline_id = run.id, step.id, pipeline.id
            assert events.wait(0.3) == []  # nothing is heard before the transaction commits
        began = time.monotonic()
        assert _heard(events) == [RunEvent(kind="started", execution_id=run_id, pipeline_id=pipeline_id,
                                           pid=os.getpid())]
        assert time.monotonic() - began < 2  # pushed, not found by a poll

        with session_scope(settings) as session:
            attempt = schema.StepAttempt(execution_id=run_id, step_id=step_id, attempt=1, status="running")
            session.add(attempt)
            session.flush()
            attempt.status = "completed"  # PostgreSQL folds the same notice, sent twice in one transaction, into one
            session.flush()
        heard = _heard(events)
        assert heard and {(e.kind, e.execution_id) for e in heard} == {("changed", run_id)}

        with pytest.raises(RuntimeError), session_scope(settings) as session:
            session.add(schema.StepAttempt(execution_id=run_id, step_id=step_id, attempt=2, status="running"))
            session.flush()
            raise RuntimeError("the try could not be recorded")
        assert _heard(events, timeout=1.0) == []
