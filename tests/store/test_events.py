"""Run events: a committed change to a run reaches a listener at once; a rolled-back one never does."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from dagsmith.store import schema
from dagsmith.store.db import get_engine, session_scope
from dagsmith.store.events import RunEvent, run_events
from tests.records import one_running_try


def _heard(events, timeout: float = 5.0) -> list[RunEvent]:
    """Everything announced within ``timeout`` seconds, waiting for the first notice and a short while after it."""
    heard = events.wait(timeout)
    while more := events.wait(0.2):
        heard += more
    return heard


def test_a_run_and_its_tries_are_announced_when_committed_and_never_when_rolled_back(settings):
    with run_events(get_engine(settings)) as events:
        assert events.wait(0.3) == []
        began = time.monotonic()
        run_id, attempt_id = one_running_try(settings)
        heard = _heard(events)
        assert time.monotonic() - began < 3  # pushed at the commit, not found by a poll
        with session_scope(settings) as session:
            pipeline_id = session.get(schema.Execution, run_id).pipeline_id
        assert heard == [RunEvent(kind="started", execution_id=run_id, pipeline_id=pipeline_id, pid=os.getpid()),
                         RunEvent(kind="changed", execution_id=run_id)]

        with session_scope(settings) as session:
            session.get(schema.StepAttempt, attempt_id).status = "completed"
            session.flush()
            assert events.wait(0.3) == []  # nothing is heard before the transaction commits
        assert _heard(events) == [RunEvent(kind="changed", execution_id=run_id)]

        with pytest.raises(RuntimeError), session_scope(settings) as session:
            session.get(schema.StepAttempt, attempt_id).status = "failed"
            session.flush()
            raise RuntimeError("the try could not be recorded")
        assert _heard(events, timeout=1.0) == []


def test_a_wait_ends_when_the_followed_process_does(settings):
    """The CLI waits on its run's child too (its pidfd): the results show when the child ends, not at the next
    timeout."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.5)"])
    with run_events(get_engine(settings)) as events, os.fdopen(os.pidfd_open(child.pid)) as ended:
        began = time.monotonic()
        assert events.wait(30, until=ended.fileno()) == []
        assert time.monotonic() - began < 10 and child.wait(timeout=5) == 0
