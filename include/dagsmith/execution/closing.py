"""Closing a run: each step's outcome from its own tries, the held-out quality of a supervised model beside a
trivial predictor's (and a person's review when it looks too good to be true) or how well a clustering's groups
separate (reviewed when they barely do), the answer to the goal and the patterns learned from the run."""

from __future__ import annotations

import dataclasses
import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sqlalchemy.orm import Session

from dagsmith.config import Settings
from dagsmith.execution.attempts import step_outcome
from dagsmith.execution.deadline import time_budget_of
from dagsmith.execution.history import execution_summary
from dagsmith.execution.specs import write_spec
from dagsmith.execution.workspace import Workspace
from dagsmith.healing.classify import telling_line
from dagsmith.learning.record import record_execution
from dagsmith.models.catalog import Stage, TaskType
from dagsmith.models.execution import RunSummary, StepStatus
from dagsmith.models.plan import DagStep, PipelineStatus
from dagsmith.registry.runs import register_run
from dagsmith.store import schema
from dagsmith.store.db import session_scope, stored
from dagsmith.store.pipelines import service_names, steps_of, task_of, tries_of
from dagsmith_kit import Bundle, BundleError

if TYPE_CHECKING:
    import pandas as pd

    from dagsmith.execution.quality import Quality

logger = logging.getLogger(__name__)
#: How much of each attempt's error the run's trace keeps (the full text stays in the attempt's record and log).
TRACE_ERROR_CHARS = 300


def _failure(session: Session, execution_id: int, steps: list[schema.PipelineStep], trace: list[dict]) -> str:
    """Which steps did not complete, each with its last try's error: what a person reads first."""
    failed = []
    for step, entry in zip(steps, trace, strict=True):
        if entry["status"] == StepStatus.COMPLETED:
            continue
        attempts = tries_of(session, execution_id, step.id)
        last = attempts[-1] if attempts else None
        why = f" ({last.error_class}: {telling_line(last.error_text or '')})" if last and last.error_class else ""
        failed.append(f"{step.position} {step.stage}{why}")
    return f"{len(failed)} step(s) did not complete: " + ", ".join(failed)


def _quality(pipeline: schema.Pipeline, steps: list[schema.PipelineStep], workspace: Workspace) -> Quality | None:
    """A supervised pipeline's held-out quality beside a trivial predictor's, from its model step's output; a
    clustering's separation, from its clustering step's; None for the other tasks."""
    task = task_of(pipeline)
    if not (task.supervised or task is TaskType.CLUSTERING):
        return None
    stage = Stage.MODELLING if task.supervised else Stage.CLUSTERING
    found = [s for s in steps if s.stage == stage.value]
    if not found:
        return None
    # Imported here: scikit-learn would otherwise load on every parse of a pipeline DAG file, and to close a run
    # without a model.
    from dagsmith.execution.quality import Quality, clustering_quality, supervised_quality

    try:
        bundle = Bundle.open(workspace.step_output(found[-1].position))
    except BundleError as exc:
        return Quality(False, {}, f"not assessable: {exc}") if task.supervised else None
    if not task.supervised:
        return clustering_quality(bundle)
    quality = supervised_quality(bundle, classification=task.classification)
    if quality.valid:
        quality.review = _review(pipeline, steps, workspace, quality) or quality.review
    return quality


def _review(pipeline: schema.Pipeline, steps: list[schema.PipelineStep], workspace: Workspace,
            quality: Quality) -> str | None:
    """Why a result too good to be true needs a person's review (``execution.doubt``), or None. A check that cannot
    read what it needs leaves the result as it is: it doubts, it never fails a run."""
    from dagsmith.execution.doubt import review  # scikit-learn, loaded only to finish a run
    from dagsmith_kit.explanation import read_explanation

    models = [s for s in steps if s.stage == Stage.MODELLING.value]
    try:
        explained = next((read_explanation(workspace.step_output(s.position)) for s in steps
                          if s.stage == Stage.EXPLANATION.value), None) or {}
        return review(quality, Bundle.open(workspace.step_output(models[-1].position)), _as_split(steps, workspace),
                      explained.get("drivers", []), classification=task_of(pipeline).classification)
    except (BundleError, OSError, ValueError) as exc:
        logger.warning("could not check whether pipeline %s's result is too good to be true: %s", pipeline.id, exc)
        return None


def _as_split(steps: list[schema.PipelineStep], workspace: Workspace) -> pd.DataFrame:
    """The training rows as the split left them, before any step prepared them (the held-out rows are never read to
    doubt a result); without a split step, the loaded table's columns and no rows."""
    split = next((s for s in steps if s.stage == Stage.SPLITTING.value), None)
    if split is not None:
        return Bundle.open(workspace.step_output(split.position)).table("train")
    return Bundle.open(workspace.step_output(steps[0].position)).table("data").head(0)


def _answer(session: Session, pipeline: schema.Pipeline, steps: list[schema.PipelineStep],
            execution: schema.Execution, quality: Quality | None) -> str:
    """The paragraph that answers the goal (or says why there is none), with ``answer.md`` written beside the
    run's steps when the disk takes it."""
    # Imported here, like the quality: pandas and scikit-learn would otherwise load on every DAG file parse.
    from dagsmith.execution.answer import StepOutcome, summarise, write_answer
    from dagsmith.execution.specs import explanation

    names = service_names(session)
    workspace = Workspace.of(execution)
    winners = {int(position): found.get("model") or found["winner"]  # runs before blending have no "model"
               for position, found in execution.trace.get("search", {}).items() if found.get("winner")}
    outcomes = [StepOutcome(s.position, Stage(s.stage), winners.get(s.position) or names.get(s.microservice_id, "?"),
                            workspace.step_output(s.position), list(s.depends_on)) for s in steps]
    summary = summarise(task_of(pipeline), pipeline.target, outcomes, quality, execution.error)
    chosen = explanation(pipeline, [DagStep(position=o.position, stage=o.stage, microservice=o.service,
                                            search=s.search or None) for o, s in zip(outcomes, steps)])
    try:
        write_answer(workspace.root, pipeline.goal, summary, outcomes, chosen)
    except OSError as exc:  # a full disk loses the report, not the run's record: the answer stays in the trace
        logger.warning("could not write the report of execution %s: %s", execution.id, exc)
    return summary


def _over_budget(pipeline: schema.Pipeline, execution: schema.Execution) -> str | None:
    """What a run that took longer than its goal's time budget says of it, or None: a broken promise is never silent.
    The run's own seconds are counted (planning came before it), and how much of them the model search took."""
    stated = time_budget_of(pipeline)
    if stated is None or not execution.seconds or execution.seconds <= stated.value:
        return None
    searched = sum(candidate.get("search_seconds", 0.0) for found in execution.trace.get("search", {}).values()
                   for candidate in found.get("candidates", []))
    where = (f"the model search took {searched:.0f} s of it, the other steps and Airflow's own work the "
             "rest" if searched else "its steps and Airflow's own work took it")
    return f"This run took {execution.seconds:.0f} s, over the time budget of {stated.value} s: {where}."


def finish(execution_id: int, *, settings: Settings) -> RunSummary:
    """Close the execution: its status, the trace of what ran, the held-out quality of a supervised model beside a
    trivial predictor's (a model no better than it fails the run), the answer to the goal (``answer.md``) and the
    patterns learned from it; returns the run's summary as people read it."""
    with session_scope(settings) as session:
        execution = stored(session, schema.Execution, execution_id)
        pipeline = stored(session, schema.Pipeline, execution.pipeline_id)
        steps = steps_of(session, pipeline.id)
        trace = []
        for step in steps:
            attempts = tries_of(session, execution_id, step.id)
            trace.append({
                "position": step.position, "stage": step.stage, "status": step_outcome(attempts),
                "attempts": [{"microservice_id": a.microservice_id, "status": a.status, "error_class": a.error_class,
                              "error": (a.error_text or "")[:TRACE_ERROR_CHARS] or None, "decision": a.decision}
                             for a in attempts],
            })
        ok = all(t["status"] == StepStatus.COMPLETED for t in trace)
        execution.trace = {**execution.trace, "steps": trace}
        execution.error = None if ok else _failure(session, execution_id, steps, trace)
        quality = _quality(pipeline, steps, Workspace.of(execution)) if ok else None
        if quality is not None:
            execution.trace = {**execution.trace, "quality": dataclasses.asdict(quality)}
            if not quality.valid:
                ok, execution.error = False, f"every step ran, but the model is {quality.problem}"
        if execution.workspace:
            execution.trace = {**execution.trace, "answer": _answer(session, pipeline, steps, execution, quality)}
        execution.status = pipeline.status = PipelineStatus.COMPLETED if ok else PipelineStatus.FAILED
        execution.finished_at = datetime.now(UTC)
        execution.seconds = (execution.finished_at - execution.started_at).total_seconds()
        if execution.workspace and (over := _over_budget(pipeline, execution)):
            from dagsmith.execution.answer import add_to_answer  # pandas, loaded only to finish a run

            add_to_answer(execution, over)
        record_execution(session, execution, steps)
        pipeline_id = pipeline.id
    if ok:  # the model's version joins the answer, and the pipeline's DAG docs open with its latest answer
        register_run(execution_id, settings=settings)
        write_spec(pipeline_id, settings)
    with session_scope(settings) as session:  # read once everything is recorded
        return execution_summary(session, stored(session, schema.Execution, execution_id))
