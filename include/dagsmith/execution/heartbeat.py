"""A try's heartbeat: while a step runs, its worker stamps the try every ``heartbeat_seconds`` from a thread
beside the service, so the reaper can tell a live try from one whose worker died (see ``reaper``)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
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
    def beat_once() -> None:
        try:
            beat(attempt_id, settings)
        except SQLAlchemyError as exc:
            logger.warning("the heartbeat of try %s was not written: %s", attempt_id, exc)

    with every(settings.heartbeat_seconds, beat_once, f"dagsmith-heartbeat-{attempt_id}"):
        yield


@contextmanager
def every(seconds: float, action: Callable[[], None], name: str) -> Iterator[None]:
    """Do ``action`` every ``seconds`` from a thread beside the block until it ends (``action`` handles its own
    errors: the thread must outlive them)."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(seconds):
            action()

    thread = threading.Thread(target=loop, name=name, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=seconds)
