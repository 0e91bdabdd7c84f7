"""A try's heartbeat: while a step runs, its worker stamps the try every ``heartbeat_seconds`` from a thread
beside the service, so the reaper can tell a live try from one whose worker died (see ``reaper``)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import func, update
from sqlalchemy.exc import SQLAlchemyError

from dagsmith.config import Settings
from dagsmith.models.execution import StepStatus
from dagsmith.store import schema
from dagsmith.store.db import session_scope

logger = logging.getLogger(__name__)


def beat(attempt_id: int, settings: Settings) -> None:
    """Stamp the try as alive now (database time, so clocks of different machines never matter)."""
    with session_scope(settings) as session:
        session.execute(update(schema.StepAttempt).where(schema.StepAttempt.id == attempt_id,
                                                         schema.StepAttempt.status == StepStatus.RUNNING)
                        .values(heartbeat_at=func.now()))


@contextmanager
def beating(attempt_id: int, settings: Settings) -> Iterator[None]:
    """Beat for the try until the block ends. A beat that fails (the database restarting) is logged and the next
    one reconnects; a worker that dies stops beating, which is the point."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(settings.heartbeat_seconds):
            try:
                beat(attempt_id, settings)
            except SQLAlchemyError as exc:
                logger.warning("the heartbeat of try %s was not written: %s", attempt_id, exc)

    thread = threading.Thread(target=loop, name=f"dagsmith-heartbeat-{attempt_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=settings.heartbeat_seconds)
