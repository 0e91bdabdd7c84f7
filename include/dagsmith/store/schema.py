"""The tables dagsmith keeps in PostgreSQL. Migrations in ``migrations/versions`` create exactly these."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from dagsmith.models.execution import StepStatus
from dagsmith.models.plan import PipelineStatus

EMBEDDING_DIM = 384
PIPELINE_STATUSES = tuple(s.value for s in PipelineStatus)  # an execution's too
STEP_STATUSES = tuple(s.value for s in StepStatus)  # a try's too
ANALYSIS_MODES = ("code", "documentation")


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSONB, list[Any]: JSONB}


def _created() -> Mapped[datetime]:
    return mapped_column(DateTime(timezone=True), server_default=func.now(), nullable=False)


class Microservice(Base):
    """A catalog entry; its content lives in versions, one per distinct content hash."""

    __tablename__ = "microservices"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    category: Mapped[str] = mapped_column(String(40))
    current_version_id: Mapped[int | None] = mapped_column(
        ForeignKey("microservice_versions.id", use_alter=True, name="fk_microservices_current_version")
    )
    created_at: Mapped[datetime] = _created()
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now(), nullable=False
    )
    current_version: Mapped[MicroserviceVersion | None] = relationship(
        foreign_keys=[current_version_id], post_update=True
    )


class MicroserviceVersion(Base):
    """The files of one upload, exactly as validated (the database is the source of truth for them)."""

    __tablename__ = "microservice_versions"
    __table_args__ = (UniqueConstraint("microservice_id", "content_hash"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    microservice_id: Mapped[int] = mapped_column(ForeignKey("microservices.id", ondelete="CASCADE"), index=True)
    content_hash: Mapped[str] = mapped_column(String(64))
    manifest: Mapped[dict[str, Any]]
    files: Mapped[dict[str, Any]]
    size_bytes: Mapped[int] = mapped_column(Integer)
    origin: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = _created()


class Analysis(Base):
    """What an analyzer concluded about one version: code-grounded or documentation-based."""

    __tablename__ = "analyses"
    __table_args__ = (
        UniqueConstraint("version_id", "mode", "analyzer", "analyzer_version"),
        CheckConstraint(_in("mode", ANALYSIS_MODES), name="ck_analyses_mode"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("microservice_versions.id", ondelete="CASCADE"), index=True)
    mode: Mapped[str] = mapped_column(String(20))
    analyzer: Mapped[str] = mapped_column(String(100))
    analyzer_version: Mapped[str] = mapped_column(String(40))
    analyzed_at: Mapped[datetime] = _created()
    result: Mapped[dict[str, Any]]


class Embedding(Base):
    """The vector of an analysis' composite text, searched by cosine distance through an HNSW index."""

    __tablename__ = "embeddings"
    # One HNSW index per analysis mode, so a search in one mode never wades through the other's vectors.
    __table_args__ = tuple(
        Index(
            f"ix_embeddings_hnsw_{mode}",
            "embedding",
            postgresql_using="hnsw",
            postgresql_with={"m": 16, "ef_construction": 64},
            postgresql_ops={"embedding": "vector_cosine_ops"},
            postgresql_where=text(f"mode = '{mode}'"),
        )
        for mode in ANALYSIS_MODES
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    analysis_id: Mapped[int] = mapped_column(ForeignKey("analyses.id", ondelete="CASCADE"), unique=True)
    microservice_id: Mapped[int] = mapped_column(ForeignKey("microservices.id", ondelete="CASCADE"), index=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("microservice_versions.id", ondelete="CASCADE"), index=True)
    mode: Mapped[str] = mapped_column(String(20))
    model: Mapped[str] = mapped_column(String(200))
    text: Mapped[str] = mapped_column(Text)
    embedding: Mapped[Any] = mapped_column(Vector(EMBEDDING_DIM))
    created_at: Mapped[datetime] = _created()


class Pipeline(Base):
    __tablename__ = "pipelines"
    __table_args__ = (CheckConstraint(_in("status", PIPELINE_STATUSES), name="ck_pipelines_status"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    goal: Mapped[str] = mapped_column(Text)
    owner: Mapped[str] = mapped_column(String(100), index=True)
    #: Shared pipelines are visible to every user in the UI; others only to their owner (and admins).
    shared: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    status: Mapped[str] = mapped_column(String(20), server_default=PipelineStatus.DRAFT.value)
    task_type: Mapped[str | None] = mapped_column(String(40))
    target: Mapped[str | None] = mapped_column(String(200))
    dataset: Mapped[str] = mapped_column(Text)
    schedule: Mapped[str | None] = mapped_column(String(100))
    plan: Mapped[dict[str, Any]] = mapped_column(server_default="{}")
    created_at: Mapped[datetime] = _created()
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now(), nullable=False
    )


class PipelineStep(Base):
    __tablename__ = "pipeline_steps"
    __table_args__ = (
        UniqueConstraint("pipeline_id", "position"),
        CheckConstraint(_in("status", STEP_STATUSES), name="ck_pipeline_steps_status"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    pipeline_id: Mapped[int] = mapped_column(ForeignKey("pipelines.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    stage: Mapped[str] = mapped_column(String(40))
    microservice_id: Mapped[int | None] = mapped_column(ForeignKey("microservices.id"))
    params: Mapped[dict[str, Any]] = mapped_column(server_default="{}")
    depends_on: Mapped[list[Any]] = mapped_column(server_default="[]")
    expected_io: Mapped[dict[str, Any]] = mapped_column(server_default="{}")
    alternatives: Mapped[list[Any]] = mapped_column(server_default="[]")
    #: a modelling step's search (``models.plan.ModelSearch``); empty for a single service
    search: Mapped[dict[str, Any]] = mapped_column(server_default="{}")
    status: Mapped[str] = mapped_column(String(20), server_default=StepStatus.PENDING.value)


class Execution(Base):
    __tablename__ = "executions"
    __table_args__ = (CheckConstraint(_in("status", PIPELINE_STATUSES), name="ck_executions_status"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    pipeline_id: Mapped[int] = mapped_column(ForeignKey("pipelines.id", ondelete="CASCADE"), index=True)
    owner: Mapped[str] = mapped_column(String(100))
    status: Mapped[str] = mapped_column(String(20), server_default=PipelineStatus.RUNNING.value)
    dataset: Mapped[str] = mapped_column(Text)
    workspace: Mapped[str | None] = mapped_column(Text)
    airflow_run_id: Mapped[str | None] = mapped_column(String(250))
    started_at: Mapped[datetime] = _created()
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    seconds: Mapped[float | None] = mapped_column(Float)
    trace: Mapped[dict[str, Any]] = mapped_column(server_default="{}")
    error: Mapped[str | None] = mapped_column(Text)


class StepAttempt(Base):
    __tablename__ = "step_attempts"
    __table_args__ = (CheckConstraint(_in("status", STEP_STATUSES), name="ck_step_attempts_status"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    execution_id: Mapped[int] = mapped_column(ForeignKey("executions.id", ondelete="CASCADE"), index=True)
    step_id: Mapped[int] = mapped_column(ForeignKey("pipeline_steps.id", ondelete="CASCADE"), index=True)
    attempt: Mapped[int] = mapped_column(Integer)
    microservice_id: Mapped[int | None] = mapped_column(ForeignKey("microservices.id"))
    params: Mapped[dict[str, Any]] = mapped_column(server_default="{}")
    status: Mapped[str] = mapped_column(String(20), server_default=StepStatus.RUNNING.value)
    started_at: Mapped[datetime] = _created()
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: Stamped every few seconds by the worker while the try runs; a stale one means the worker died (``reaper``).
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: The worker that ran the try (``execution.workers.worker_name``): which machine or Celery worker to look at.
    worker: Mapped[str | None] = mapped_column(String(255))
    #: The most memory the try held at once, in MB, where the runtime measures it (``InvocationResult.peak_mb``).
    peak_mb: Mapped[int | None] = mapped_column(Integer)
    #: The value of the try's containers' and pods' ``reaper.ATTEMPT_LABEL``: random, because ids repeat across stores
    #: and several deployments (or tests) may share one container engine, whose reapers must not remove each other's.
    container_label: Mapped[str] = mapped_column(String(32), default=lambda: uuid.uuid4().hex)
    error_class: Mapped[str | None] = mapped_column(String(60))
    error_text: Mapped[str | None] = mapped_column(Text)
    decision: Mapped[dict[str, Any]] = mapped_column(server_default="{}")


class Pattern(Base):
    """Learned execution counts: per stage, or per transition (service -> next service); owner '' is global."""

    __tablename__ = "patterns"
    __table_args__ = (
        UniqueConstraint(
            "kind", "owner", "stage", "microservice_id", "next_microservice_id",
            name="uq_patterns_key", postgresql_nulls_not_distinct=True,
        ),
        CheckConstraint("kind IN ('stage', 'transition')", name="ck_patterns_kind"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(20))
    owner: Mapped[str] = mapped_column(String(100), server_default="")
    stage: Mapped[str] = mapped_column(String(40))
    microservice_id: Mapped[int] = mapped_column(ForeignKey("microservices.id", ondelete="CASCADE"), index=True)
    next_microservice_id: Mapped[int | None] = mapped_column(ForeignKey("microservices.id", ondelete="CASCADE"))
    successes: Mapped[int] = mapped_column(Integer, server_default="0")
    failures: Mapped[int] = mapped_column(Integer, server_default="0")
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now(), nullable=False
    )


class GoalAnswer(Base):
    """What a person chose a goal's words to mean on a table of one shape (its column names and kinds): the goal
    reader reads the same words on such a table so again, without asking. Owner '' holds everyone's answers."""

    __tablename__ = "goal_answers"
    __table_args__ = (UniqueConstraint("owner", "table_shape", "phrase", name="uq_goal_answers_key"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    owner: Mapped[str] = mapped_column(String(100), server_default="")
    #: A digest of the table's column names and semantic types (``learning.answers.table_shape``).
    table_shape: Mapped[str] = mapped_column(String(64))
    #: The goal's words, lower-cased and spaced evenly.
    phrase: Mapped[str] = mapped_column(Text)
    task_type: Mapped[str] = mapped_column(String(40))
    target: Mapped[str | None] = mapped_column(Text)
    #: Who chose it, and how: an answered question or a target given outright.
    chosen_by: Mapped[str] = mapped_column(String(100))
    how: Mapped[str] = mapped_column(String(40))
    chosen_at: Mapped[datetime] = _created()


MODEL_STATUSES = ("champion", "challenger", "retired")


class ModelVersion(Base):
    """A fitted model a completed run froze (``registry``): its folder under the model root, how well it scored on
    its run's held-out rows, and why it is or is not the pipeline's champion, the version ``dagsmith predict``
    scores with. At most one champion per pipeline."""

    __tablename__ = "model_versions"
    __table_args__ = (
        UniqueConstraint("pipeline_id", "version"),
        CheckConstraint(_in("status", MODEL_STATUSES), name="ck_model_versions_status"),
        Index("uq_model_versions_champion", "pipeline_id", unique=True,
              postgresql_where=text("status = 'champion'")),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    pipeline_id: Mapped[int] = mapped_column(ForeignKey("pipelines.id", ondelete="CASCADE"), index=True)
    version: Mapped[int] = mapped_column(Integer)
    execution_id: Mapped[int | None] = mapped_column(ForeignKey("executions.id", ondelete="SET NULL"))
    status: Mapped[str] = mapped_column(String(20))
    #: The run's held-out metrics (``execution.quality``).
    metrics: Mapped[dict[str, Any]] = mapped_column(server_default="{}")
    #: A digest of the dataset the model was trained on.
    fingerprint: Mapped[str] = mapped_column(String(64))
    #: The columns a table to score must have, with their types (the version folder's ``schema.json``).
    schema: Mapped[dict[str, Any]] = mapped_column(server_default="{}")
    path: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = _created()
    #: How the version got its status: the metric, both scores, the reason, who decided (``registry.champion``).
    decision: Mapped[dict[str, Any]] = mapped_column(server_default="{}")
    #: Its MLflow run and registered model version when ``MLFLOW_TRACKING_URI`` is set, or why logging failed
    #: (``registry.mlflow``); empty without MLflow.
    mlflow: Mapped[dict[str, Any]] = mapped_column(server_default="{}")


class ScoringRun(Base):
    """One ``dagsmith predict``: which version scored which rows, where the predictions went, and the drift per
    feature between those rows and the training's."""

    __tablename__ = "scoring_runs"
    id: Mapped[int] = mapped_column(primary_key=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("model_versions.id", ondelete="CASCADE"), index=True)
    owner: Mapped[str] = mapped_column(String(100))
    dataset: Mapped[str] = mapped_column(Text)
    output: Mapped[str] = mapped_column(Text)
    rows: Mapped[int] = mapped_column(Integer)
    #: The scoring step's ``scoring.json``: schema notes and drift per feature.
    report: Mapped[dict[str, Any]] = mapped_column(server_default="{}")
    #: The features whose drift passed the threshold then in force.
    drifted: Mapped[list[Any]] = mapped_column(server_default="[]")
    created_at: Mapped[datetime] = _created()
