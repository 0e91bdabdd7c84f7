"""Run events pushed by PostgreSQL (``LISTEN``/``NOTIFY``): whoever follows a run learns when it changed instead of
querying the store again and again.

Every transaction that records an execution or one of its step tries announces it on ``CHANNEL``, from any
process (the CLI, a ``dag.test()`` child, a Celery worker). PostgreSQL delivers the notice when that transaction
commits and drops it when it rolls back, so a follower never hears of a change it cannot read.
"""

from __future__ import annotations

import os
import select
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

from pydantic import BaseModel
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session

from dagsmith.store import schema

CHANNEL = "dagsmith_runs"


class RunEvent(BaseModel):
    """A committed change to one execution: ``started`` when it was recorded (by process ``pid``), else ``changed``
    (one of its tries began, ended or was decided on)."""

    kind: Literal["started", "changed"]
    execution_id: int
    pipeline_id: int | None = None
    pid: int | None = None


def announce(session: Session, context: Any) -> None:
    """After a flush (``store.db`` registers it for every session): queue a notice per execution it touched."""
    events = {}
    for row in (*session.new, *session.dirty):
        if isinstance(row, schema.StepAttempt):
            events.setdefault(row.execution_id, RunEvent(kind="changed", execution_id=row.execution_id))
        elif isinstance(row, schema.Execution) and row in session.new:
            events[row.id] = RunEvent(kind="started", execution_id=row.id, pipeline_id=row.pipeline_id,
                                      pid=os.getpid())
    for announced in events.values():
        session.connection().execute(text("SELECT pg_notify(:channel, :payload)"),
                                     {"channel": CHANNEL, "payload": announced.model_dump_json(exclude_none=True)})


class RunEvents:
    """The run events committed since this listener began, as they arrive."""

    def __init__(self, connection: Any) -> None:
        self._connection = connection

    def wait(self, timeout: float, until: int | None = None) -> list[RunEvent]:
        """The events that arrive within ``timeout`` seconds: it returns at the first (with any that came with it),
        or as soon as the file descriptor ``until`` is readable (a child's pidfd: it returns when the child ends)."""
        if until is None:
            return self._read(timeout)
        if waiting := self._read(0):  # heard before this call, or queued behind the last one
            return waiting
        select.select([self._connection.fileno(), until], [], [], timeout)
        return self._read(0)

    def _read(self, timeout: float) -> list[RunEvent]:
        return [RunEvent.model_validate_json(notice.payload)
                for notice in self._connection.notifies(timeout=timeout, stop_after=1)]


@contextmanager
def run_events(engine: Engine) -> Iterator[RunEvents]:
    """Listen for run events on a connection of its own (held open, outside any transaction) until the block ends."""
    pooled = engine.raw_connection()
    try:
        connection = pooled.driver_connection
        connection.autocommit = True
        connection.execute(f"LISTEN {CHANNEL}")
        try:
            yield RunEvents(connection)
        finally:
            connection.execute(f"UNLISTEN {CHANNEL}")
    finally:
        pooled.invalidate()  # its session state (autocommit, listening) must not reach the pool
