"""A goal's time budget as a deadline the model search keeps, whatever the steps before it took.

The plan gives each candidate model a share of the goal's budget, but it cannot know how long loading, preparing and
Airflow's own work will take on this machine today. So when a candidate starts, its budget is cut to what is left
of the run's: the budget less the seconds the run has already taken, less what the steps after the search usually
take (their services' median in this deployment's history), shared among the rounds of candidates still to finish
(candidates side by side share a round: on a deployment every candidate has a task and all start together; a local
run fits ``DAGSMITH_CANDIDATES_AT_ONCE`` at a time). A candidate with nothing left to spend does not run once another
has given the selection a model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sqlalchemy import Float, func, select
from sqlalchemy.orm import Session

from dagsmith.models.execution import StepStatus
from dagsmith.models.intent import ConstraintKind, Count, Intent, find_constraint
from dagsmith.models.plan import ModelSearch
from dagsmith.store import schema
from dagsmith.store.pipelines import service_names, steps_of, tries_of

#: What a step whose service has never completed here is assumed to take.
UNKNOWN_STEP_SECONDS = 3.0
#: The selection of the winner and the run's closing, after the last step.
CLOSING_SECONDS = 2.0
#: Less than this is no search: the candidate would only fit its given parameters, late.
MIN_CANDIDATE_SECONDS = 1.0
#: How many of a service's latest completed tries its usual duration is read from.
HISTORY_TRIES = 50


class OutOfTime(Exception):
    """The time budget is spent and another candidate already gave the search a model: this one does not run."""


@dataclass(frozen=True)
class Share:
    """A candidate's budget under the deadline and why it is what it is."""

    seconds: float
    reason: str


def time_budget_of(pipeline: schema.Pipeline) -> Count | None:
    """The goal's stated time budget (a constraint of the planned intent), or None."""
    if not pipeline.plan.get("intent"):
        return None
    stated = find_constraint(Intent.model_validate(pipeline.plan["intent"]).constraints, ConstraintKind.TIME_BUDGET)
    return stated if isinstance(stated, Count) else None


def candidate_share(session: Session, execution: schema.Execution, step: schema.PipelineStep,
                    search: ModelSearch, at_once: int | None = None) -> Share | None:
    """The budget of the candidate about to start, or None when the goal states no time budget (the plan's share
    stands); ``at_once``: how many of the step's candidates run side by side (None: all of them). Raises
    ``OutOfTime`` when nothing is left and another candidate of the step has completed.

    Side by side, what is left is shared by rounds, not by candidates: those of a round spend the same seconds. Too
    few rounds assumed (candidates queued behind a busy executor) leaves the last ones nothing, never the run late."""
    pipeline = session.get(schema.Pipeline, execution.pipeline_id)
    stated = time_budget_of(pipeline) if pipeline else None
    if stated is None:
        return None
    elapsed = session.scalar(select(func.extract("epoch", func.clock_timestamp() - schema.Execution.started_at)
                                    .cast(Float)).where(schema.Execution.id == execution.id)) or 0.0
    later = [s for s in steps_of(session, execution.pipeline_id) if s.position > step.position]
    usual = _usual_seconds(session, {s.microservice_id for s in later if s.microservice_id is not None})
    after = sum((usual.get(s.microservice_id, UNKNOWN_STEP_SECONDS) for s in later), CLOSING_SECONDS)
    finished = _finished_candidates(session, execution.id, step.id)
    waiting = max(1, len([name for name in search.candidates if name not in finished]))
    side_by_side = min(waiting, at_once or waiting)
    left = float(stated.value) - elapsed - after
    share = left / math.ceil(waiting / side_by_side)
    said = (f"{stated.value} s time budget: {elapsed:.0f} s taken, about {after:.0f} s for the steps after the "
            f"search, {max(left, 0):.0f} s left for {waiting} candidate(s), {side_by_side} at a time")
    if share < MIN_CANDIDATE_SECONDS:
        if any(status == StepStatus.COMPLETED for status in finished.values()):
            raise OutOfTime(f"not run: {said}")
        return Share(MIN_CANDIDATE_SECONDS, f"{said}; the least a candidate gets")
    return Share(min(search.budget_seconds, round(share, 1)), said)


def _usual_seconds(session: Session, wanted: set[int]) -> dict[int | None, float]:
    """Each service's median seconds over its latest completed tries here (services never run here are absent)."""
    if not wanted:
        return {}
    latest = (select(schema.StepAttempt.microservice_id.label("service"),
                     func.extract("epoch", schema.StepAttempt.finished_at - schema.StepAttempt.started_at)
                     .cast(Float).label("seconds"),
                     func.row_number().over(partition_by=schema.StepAttempt.microservice_id,
                                            order_by=schema.StepAttempt.id.desc()).label("recent"))
              .where(schema.StepAttempt.microservice_id.in_(wanted),
                     schema.StepAttempt.status == StepStatus.COMPLETED,
                     schema.StepAttempt.finished_at.is_not(None))
              .subquery())
    return {service: float(seconds) for service, seconds in session.execute(
        select(latest.c.service, func.percentile_cont(0.5).within_group(latest.c.seconds))
        .where(latest.c.recent <= HISTORY_TRIES).group_by(latest.c.service)).all()}


def _finished_candidates(session: Session, execution_id: int, step_id: int) -> dict[str, str]:
    """The step's candidates that have finished in this run, with how (completed, failed or skipped)."""
    names = service_names(session)
    return {names[attempt.microservice_id]: attempt.status for attempt in tries_of(session, execution_id, step_id)
            if attempt.status != StepStatus.RUNNING}
