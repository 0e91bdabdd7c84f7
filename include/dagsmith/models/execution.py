"""Contracts of execution: the states a step and its tries go through, and what a try's decision says."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dagsmith.models.plan import PipelineStatus


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


class Decision(BaseModel):
    """The decision recorded on a try (``step_attempts.decision``): what comes next, and why."""

    model_config = ConfigDict(populate_by_name=True)

    action: TryAction
    reason: str = ""
    replaced: int | None = Field(None, alias="from", description="the failed service's id (a substitution)")
    to: int | None = Field(None, description="the substitute's id")
    to_name: str | None = None
    params: dict[str, Any] | None = Field(None, description="the substitute's parameters")
    provenance: dict[str, Any] | None = Field(None, description="who decided: the rules or a model")

    @classmethod
    def of(cls, attempt_decision: dict | None) -> Decision | None:
        """A try's stored decision, or None when none was recorded yet."""
        return cls.model_validate(attempt_decision) if attempt_decision else None

    @staticmethod
    def action_of(attempt_decision: dict | None) -> TryAction | None:
        return TryAction(attempt_decision["action"]) if attempt_decision else None

    def stored(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class SearchSummary(BaseModel):
    """A model search's outcome, as the run's trace keeps it under ``search.<position>``: the run page, the run's
    answer and the configurations later searches start from read it there."""

    metric: str = Field(description="the validation metric that picked the winner")
    winner: str | None = Field(description="the best candidate that completed; None when none did")
    reason: str
    threshold: float | None = Field(None, description="the probability a rare class is labelled from, when tuned")
    blend: dict[str, float] | None = Field(None, description="the blended candidates' weights, when a blend won")
    model: str | None = Field(None, description="the model handed on: the winner, or the blend's members")
    table: dict[str, Any] | None = Field(None, description="the table's meta-features (dagsmith_kit.portfolio.Table)")
    candidates: list[dict[str, Any]] = Field(
        default_factory=list, description="each candidate's name, error and chosen params, and the validation "
                                          "figures it reported (a figure it did not report is absent)")


class StepResult(BaseModel):
    """What a step's task did when it completed (a failed try raises instead): the try that ran, a retry that found
    the step done by an earlier try of the run, a candidate of a model search, or the search's selection. Operators
    hand it to Airflow as the task's XCom, dumped to JSON."""

    position: int
    skipped: bool = Field(False, description="an earlier try of this run had completed the step; nothing ran")
    microservice: str | None = Field(None, description="the service that ran (a search's candidate)")
    attempt: int | None = Field(None, description="the try's number within the step")
    seconds: float | None = None
    search: SearchSummary | None = Field(None, description="a model search's selection")


#: Where a forecast's run writes its values past the data, in its workspace (``registry.ahead``).
FORECAST_FILE = "forecast.csv"


class RunSummary(BaseModel):
    """One run's outcome as people read it (``dagsmith run``, the run page, the REST API): its status, the answer to
    the goal, every step's metrics, held-out quality beside a trivial predictor's, the model search, plots,
    report, substitutions and error."""

    pipeline_id: int
    execution_id: int
    status: PipelineStatus
    owner: str
    dataset: str
    started_at: datetime
    seconds: float | None
    workspace: str
    metrics: dict[str, Any]
    artifacts: list[str]
    report: str | None
    answer: str | None
    substitutions: list[dict[str, Any]] = Field(description="position, stage, from, to, reason")
    error: str | None
    isolation: list[str]
    quality: dict[str, Any] | None
    search: dict[str, Any]
    review: str | None = Field(None, description="why a completed result is too good to trust before a person "
                                                 "reviews it (a likely leak or a wrong target)")
    forecast: str | None = Field(None, description="a forecast's values past the data (forecast.csv: the series "
                                                   "keys, the time, the prediction)")

    @property
    def completed(self) -> bool:
        return self.status is PipelineStatus.COMPLETED
