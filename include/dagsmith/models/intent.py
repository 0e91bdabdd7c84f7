"""The intent detector's contract (agent A2): what the user wants, with a reason for each inference."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from dagsmith.models.catalog import Stage, TaskType
from dagsmith.models.reasoning import Provenance


class IssueLevel(StrEnum):
    ERROR = "error"  # blocks planning
    WARNING = "warning"  # planning goes on; the user should know


class IntentIssue(BaseModel):
    level: IssueLevel
    code: str = Field(description="stable identifier, e.g. target_missing, class_imbalance, leakage_suspect")
    message: str


class Constraint(BaseModel):
    """A limit the goal states: time budget, interpretability, excluded model families, ..."""

    kind: str = Field(description="time_budget_seconds | interpretable | exclude_family | max_features | ...")
    value: Any
    reason: str


class Intent(BaseModel):
    goal: str
    task_type: TaskType
    target: str | None
    required_stages: list[Stage]
    optional_stages: list[Stage] = Field(default_factory=list)
    constraints: list[Constraint] = Field(default_factory=list)
    reasons: dict[str, str] = Field(default_factory=dict, description="inferred field -> why")
    issues: list[IntentIssue] = Field(default_factory=list)
    confidence: float = Field(ge=0.0, le=1.0)
    provenance: Provenance = Field(default_factory=Provenance)

    @property
    def errors(self) -> list[IntentIssue]:
        return [i for i in self.issues if i.level is IssueLevel.ERROR]

    @property
    def warnings(self) -> list[IntentIssue]:
        return [i for i in self.issues if i.level is IssueLevel.WARNING]


class AmbiguousGoal(ValueError):
    """The goal cannot be read with confidence; the message asks the user what they mean."""


class InvalidIntent(ValueError):
    """The intent was read but cannot be planned (e.g. the target is absent); the message says why."""

    def __init__(self, intent: Intent):
        super().__init__(" ".join(issue.message for issue in intent.errors))
        self.intent = intent
