"""Contracts of the recommender (A3) and the pipeline builder (A4), and the plan that bundles all four."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from dagsmith.models.catalog import Stage, TaskType
from dagsmith.models.intent import Intent
from dagsmith.models.profile import DatasetProfile
from dagsmith.models.reasoning import Provenance


#: How many candidates per stage a person is shown (and chooses among).
TOP_CANDIDATES = 3


class RankingMode(StrEnum):
    """How candidates are ranked; the non-default modes are the benchmark's ablations."""

    FULL = "full"
    NO_HISTORY = "no-history"
    SEMANTIC_ONLY = "semantic-only"
    DOCUMENTATION = "documentation"


class Weights(BaseModel):
    keyword: float = 0.3
    semantic: float = 0.3
    compatibility: float = 0.2
    pattern: float = 0.2


class Signals(BaseModel):
    """Each signal in [0, 1]."""

    keyword: float
    semantic: float
    compatibility: float
    pattern: float


class Candidate(BaseModel):
    microservice: str
    score: float
    signals: Signals
    reason: str = Field(description="one sentence a person can audit")
    prior_successes: int = 0
    prior_failures: int = 0


class StageRecommendation(BaseModel):
    stage: Stage
    query: str = Field(description="the text the semantic signal compared services against")
    candidates: list[Candidate] = Field(description="best first: the top 3 are shown, the rest kept for healing")
    considered: int

    @property
    def top(self) -> list[Candidate]:
        return self.candidates[:TOP_CANDIDATES]

    def top_lines(self) -> list[str]:
        """The top candidates as numbered markdown lines (name, score, reason): what people choose among."""
        return [f"{i}. `{c.microservice}` {c.score:.2f}: {c.reason}" for i, c in enumerate(self.top, 1)]


class Recommendation(BaseModel):
    mode: RankingMode
    weights: Weights
    user: str | None = None
    stages: list[StageRecommendation]

    def for_stage(self, stage: Stage) -> StageRecommendation | None:
        return next((s for s in self.stages if s.stage == stage), None)


class PipelineStatus(StrEnum):
    DRAFT = "draft"
    READY = "ready"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"


class ModelSearch(BaseModel):
    """Several models fitted side by side on the same prepared bundle, each tuned within its budget on the
    training rows; the best validation score wins, or their blend (``execution.search``)."""

    candidates: list[str] = Field(description="services tried, the recommender's order")
    params: dict[str, dict[str, Any]] = Field(default_factory=dict, description="each candidate's inferred params")
    budget_seconds: float = Field(gt=0, description="each candidate's tuning budget")
    metric: str = Field(description="the validation metric that picks the winner (dagsmith_kit.search.SCORERS)")
    blend: bool = Field(default=True, description="hand on a weighted average of the candidates when it validates "
                                                  "better than the best alone (execution.blending)")
    reason: str
    table: dict[str, Any] | None = Field(default=None, description="the table's meta-features "
                                                                   "(dagsmith_kit.portfolio.Table), for history")
    warm_start: dict[str, list[dict[str, Any]]] = Field(
        default_factory=dict, description="per candidate, configurations that won on similar tables, nearest first")

    def params_for(self, candidate: str) -> dict[str, Any]:
        """A candidate's params, with the search that makes it validate and tune itself."""
        warm = {"warm_start": self.warm_start[candidate]} if self.warm_start.get(candidate) else {}
        return {**self.params.get(candidate, {}),
                "search": {"budget_seconds": self.budget_seconds, "metric": self.metric, **warm}}


class PlannedStep(BaseModel):
    position: int
    stage: Stage
    microservice: str
    params: dict[str, Any] = Field(default_factory=dict)
    param_reasons: dict[str, str] = Field(default_factory=dict)
    depends_on: list[int] = Field(default_factory=list, description="positions of the steps feeding this one")
    expected_inputs: list[str] = Field(default_factory=list)
    expected_outputs: list[str] = Field(default_factory=list)
    alternatives: list[str] = Field(default_factory=list, description="next-ranked services, for self-healing")
    chosen_by: str = Field(default="recommender", description="recommender | user")
    search: ModelSearch | None = Field(default=None, description="a modelling step that tries several models")


class ValidationCheck(BaseModel):
    name: str
    passed: bool
    detail: str


#: The schedule that retrains a pipeline whenever its dataset's Airflow asset is updated (``airflow.assets``).
ON_NEW_DATA = "on new data"


class PipelineSpec(BaseModel):
    id: int | None = None
    name: str
    goal: str
    owner: str
    shared: bool = Field(default=False, description="visible to every user of the UI, not only its owner")
    status: PipelineStatus = PipelineStatus.DRAFT
    task_type: TaskType
    target: str | None
    dataset: str
    schedule: str | None = Field(default=None, description=f"cron expression for retraining runs, or '{ON_NEW_DATA}'")
    steps: list[PlannedStep]
    checks: list[ValidationCheck] = Field(default_factory=list)
    param_provenance: Provenance = Field(default_factory=Provenance, description="who inferred the parameters")

    @property
    def valid(self) -> bool:
        return all(check.passed for check in self.checks)


class Plan(BaseModel):
    profile: DatasetProfile
    intent: Intent
    recommendation: Recommendation
    pipeline: PipelineSpec
    timings: dict[str, float] = Field(default_factory=dict, description="seconds per agent")


class DagStep(BaseModel):
    """A step as its pipeline's DAG needs it: task names, edges, retries and the models a search fits."""

    position: int
    stage: Stage
    microservice: str
    depends_on: list[int] = Field(default_factory=list)
    alternatives: int = Field(0, description="how many services self-healing may swap in")
    search: ModelSearch | None = None


class DagSpec(BaseModel):
    """What a pipeline's DAG is generated from (``execution.specs``): written from the store whenever the pipeline
    changes, read when Airflow parses the DAG file, without the database."""

    pipeline_id: int
    name: str
    goal: str
    owner: str
    shared: bool = Field(default=False, description="every login may see and trigger the DAG, not only its owner")
    dataset: str
    schedule: str | None = None
    retry_delay_seconds: float = 5.0
    steps: list[DagStep]
    explanation: str = Field("", description="the DAG's docs: the latest answer and how each service was chosen")
