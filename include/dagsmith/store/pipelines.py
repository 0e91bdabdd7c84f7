"""The pipeline rows every part reads and the builder writes: a pipeline with its steps in order, one step by
position, and the names of the services they run. Agents and the executor stay plain functions over these."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from dagsmith.models.catalog import TaskType
from dagsmith.models.execution import StepStatus
from dagsmith.models.plan import PipelineSpec
from dagsmith.store import schema


def task_of(pipeline: schema.Pipeline) -> TaskType:
    """The task a built pipeline does (the builder always records one)."""
    if pipeline.task_type is None:
        raise LookupError(f"pipeline {pipeline.id} records no task type")
    return TaskType(pipeline.task_type)


def steps_of(session: Session, pipeline_id: int) -> list[schema.PipelineStep]:
    """The pipeline's steps in the order they were planned."""
    return list(session.scalars(select(schema.PipelineStep).where(schema.PipelineStep.pipeline_id == pipeline_id)
                                .order_by(schema.PipelineStep.position)))


def step_at(session: Session, pipeline_id: int, position: int) -> schema.PipelineStep:
    return session.scalar(select(schema.PipelineStep).where(
        schema.PipelineStep.pipeline_id == pipeline_id, schema.PipelineStep.position == position))


def tries_of(session: Session, execution_id: int, step_id: int) -> list[schema.StepAttempt]:
    """A step's tries in one run, in the order they started."""
    return list(session.scalars(select(schema.StepAttempt).where(
        schema.StepAttempt.execution_id == execution_id, schema.StepAttempt.step_id == step_id)
        .order_by(schema.StepAttempt.attempt)))


def service_names(session: Session) -> dict[int | None, str]:
    """Every microservice's name by id (steps and tries store ids, which the schema lets be empty; people read
    names)."""
    return dict(session.execute(select(schema.Microservice.id, schema.Microservice.name)).all())


def insert_pipeline(session: Session, spec: PipelineSpec, service_ids: dict[str, int], plan: dict) -> int:
    """Add the pipeline and its steps in the caller's transaction (all or nothing); returns its id."""
    row = schema.Pipeline(name=spec.name, goal=spec.goal, owner=spec.owner, shared=spec.shared,
                          status=spec.status.value, task_type=spec.task_type.value, target=spec.target,
                          dataset=spec.dataset, schedule=spec.schedule, plan=plan)
    session.add(row)
    session.flush()
    for step in spec.steps:
        session.add(schema.PipelineStep(
            pipeline_id=row.id, position=step.position, stage=step.stage.value,
            microservice_id=service_ids[step.microservice], params=step.params, depends_on=step.depends_on,
            expected_io={"inputs": step.expected_inputs, "outputs": step.expected_outputs},
            alternatives=[{"id": service_ids[name], "name": name} for name in step.alternatives],
            status=StepStatus.PENDING, search=step.search.model_dump(mode="json") if step.search else {},
        ))
    session.flush()
    return row.id
