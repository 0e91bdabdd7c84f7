"""Learning from a finished execution: stage and transition counts, globally and for the run's owner.

Every service that completed a step earns a success (every member of a blended model search, whose model is handed
on); every service that failed a try earns a failure at that stage, which lowers its pattern signal; consecutive
steps' final services earn a transition.
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from dagsmith.models.execution import StepStatus
from dagsmith.store import schema


def _bump(session: Session, kind: str, owner: str, stage: str, service_id: int, next_id: int | None,
          ok: bool) -> None:
    column = "successes" if ok else "failures"
    statement = insert(schema.Pattern).values(kind=kind, owner=owner, stage=stage, microservice_id=service_id,
                                              next_microservice_id=next_id, successes=int(ok), failures=int(not ok))
    table = schema.Pattern.__table__
    session.execute(statement.on_conflict_do_update(
        constraint="uq_patterns_key", set_={column: table.c[column] + 1, "updated_at": func.now()}))


def record_execution(session: Session, execution: schema.Execution, steps: list[schema.PipelineStep]) -> None:
    owners = {"", execution.owner} if execution.owner and execution.owner != "anonymous" else {""}
    final: dict[int, int] = {}
    for step in steps:
        attempts = list(session.scalars(select(schema.StepAttempt).where(
            schema.StepAttempt.execution_id == execution.id, schema.StepAttempt.step_id == step.id)))
        for attempt in attempts:
            if attempt.status == StepStatus.FAILED:
                for owner in owners:
                    _bump(session, "stage", owner, step.stage, attempt.microservice_id, None, ok=False)
        succeeded = [a for a in attempts if a.status == StepStatus.COMPLETED]
        if succeeded:
            final[step.position] = succeeded[-1].microservice_id
        for attempt in succeeded:
            for owner in owners:
                _bump(session, "stage", owner, step.stage, attempt.microservice_id, None, ok=True)
    for step in steps:
        parent = step.depends_on[0] if step.depends_on else None
        if parent in final and step.position in final:
            for owner in owners:
                _bump(session, "transition", owner, step.stage, final[parent], final[step.position], ok=True)
