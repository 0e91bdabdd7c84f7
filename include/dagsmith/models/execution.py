"""Contracts of execution: the states a step and its tries go through, and what a try's decision says."""

from __future__ import annotations

from enum import StrEnum


class StepStatus(StrEnum):
    """A pipeline step's state, and each of its tries' (a try is never ``pending`` or ``skipped`` but by search)."""

    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    SKIPPED = "skipped"


class TryAction(StrEnum):
    """What the decision recorded on a try says: self-healing's next move after it failed, or its part in the
    modelling step's search."""

    RETRY = "retry"
    SUBSTITUTE = "substitute"
    GIVE_UP = "give_up"
    CANDIDATE = "candidate"
    SELECTED = "selected"
    OUTPERFORMED = "outperformed"
