"""The tries of a step: open one (numbered, recorded as running), run it in the runtime, check its output bundle
and record the outcome; ``run_step`` is one Airflow try of a step's task, healing first when the last try failed.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from dagsmith.catalog.repository import current_service
from dagsmith.config import Settings
from dagsmith.execution.contract import check_bundle
from dagsmith.execution.heartbeat import beating
from dagsmith.execution.reaper import ATTEMPT_LABEL, INTERRUPTED, Leftovers, close_lost
from dagsmith.execution.workers import worker_name
from dagsmith.execution.workspace import Workspace, promote_output
from dagsmith.healing.classify import Diagnosis, ErrorClass, diagnose
from dagsmith.healing.policy import heal
from dagsmith.models.execution import Decision, StepResult, StepStatus, TryAction
from dagsmith.models.plan import PipelineStatus
from dagsmith.runtime.base import Invocation, InvocationResult, Limits, Runtime, RuntimeUnavailable
from dagsmith.store import schema
from dagsmith.store.db import session_scope, stored
from dagsmith.store.pipelines import step_at, tries_of

logger = logging.getLogger(__name__)


class StepFailed(Exception):
    """The step's try failed; Airflow retries it, and healing decides what the next try runs."""


class RunStopped(StepFailed):
    """The run was closed while this step waited to start a try (stopped, or its worker taken for dead)."""


def close_lost_tries(execution_id: int, position: int, *, settings: Settings) -> int:
    """Mark the step's tries still 'running' as failed: Airflow runs one try of a task at a time, so when a new
    try starts, any try left running was cut off (kill -9, a lost machine). Transient, so healing retries. A run
    the reaper failed meanwhile is running again, unless it was interrupted (its CLI is gone)."""
    with session_scope(settings) as session:
        execution = stored(session, schema.Execution, execution_id)
        step = step_at(session, execution.pipeline_id, position)
        lost = [a for a in tries_of(session, execution_id, step.id) if a.status == StepStatus.RUNNING]
        for attempt in lost:
            close_lost(attempt, datetime.now(UTC))
        if execution.status == PipelineStatus.FAILED and execution.finished_at is not None and \
                not (execution.error or "").startswith(INTERRUPTED):
            execution.status, execution.finished_at, execution.error = PipelineStatus.RUNNING, None, None
            stored(session, schema.Pipeline, execution.pipeline_id).status = PipelineStatus.RUNNING
        left = Leftovers.of(session, lost)
    left.remove(settings)  # what the cut-off try left running here: the retry may run on this very machine
    return len(lost)


def step_outcome(attempts: list[schema.StepAttempt]) -> str:
    """A step's state in one run, from that run's own tries: runs of one pipeline may overlap (several
    ``dagsmith run`` at once), so the step row, shared by them, cannot say what this run did."""
    if any(a.status == StepStatus.COMPLETED for a in attempts):
        return StepStatus.COMPLETED
    if attempts and Decision.action_of(attempts[-1].decision) is TryAction.GIVE_UP:
        return StepStatus.FAILED
    return StepStatus.PENDING if not attempts else attempts[-1].status


def _next_try(step: schema.PipelineStep, attempts: list[schema.StepAttempt]) -> tuple[int | None, dict]:
    """The service and parameters of this run's next try: what healing decided after its last failure, the
    same again for a retry, else the pipeline's current choice."""
    if not attempts:
        return step.microservice_id, dict(step.params)
    decision = Decision.of(attempts[-1].decision)
    if decision and decision.action is TryAction.SUBSTITUTE:
        return decision.to, dict(decision.params or {})
    return attempts[-1].microservice_id, dict(attempts[-1].params)


@dataclass(frozen=True)
class Try:
    """One try of a step, as recorded: what runs, on which input, into which folder."""

    attempt_id: int
    attempt: int
    #: The ``ATTEMPT_LABEL`` value its containers carry (``StepAttempt.container_label``).
    label: str
    service: str
    files: dict
    params: dict
    expected_outputs: list[str]
    target: str | None
    workspace: Workspace
    source: Path
    output: Path
    #: The catalog's hash of the service version that runs.
    version: str
    #: The service self-healing took out to run this one, and why (None for a step's first choice).
    replaced: str | None = None
    reason: str | None = None


#: Told of each try once its outcome is recorded (the diagnosis is None when it succeeded): how a step's Airflow
#: task learns what ran, for lineage.
TryObserver = Callable[[Try, Diagnosis | None], None]


def open_try(session: Session, execution: schema.Execution, step: schema.PipelineStep, service_id: int | None,
             params: dict, *, decision: dict | None = None) -> Try:
    """Record a new running try of ``step`` (numbered under a lock on the step: tries of one step may start side
    by side, as a model search's candidates do). A run no longer running gets none: its share lock waits for a stop
    being recorded (``reaper.interrupt``), so no try starts after it."""
    status, error = session.execute(select(schema.Execution.status, schema.Execution.error)
                                    .where(schema.Execution.id == execution.id).with_for_update(read=True)).one()
    if status != PipelineStatus.RUNNING:
        raise RunStopped(f"the run is over ({error or status}): no try of step {step.position} starts")
    session.execute(select(schema.PipelineStep.id).where(schema.PipelineStep.id == step.id).with_for_update())
    number = len(tries_of(session, execution.id, step.id)) + 1
    service, files, analysis = current_service(session, service_id)
    attempt = schema.StepAttempt(execution_id=execution.id, step_id=step.id, attempt=number,
                                 microservice_id=service.id, params=params, status=StepStatus.RUNNING,
                                 decision=decision or {}, worker=worker_name())
    session.add(attempt)
    step.status = StepStatus.RUNNING
    session.flush()
    workspace = Workspace.of(execution)
    source = workspace.step_input(step.depends_on)
    target = stored(session, schema.Pipeline, execution.pipeline_id).target
    version = stored(session, schema.MicroserviceVersion, service.current_version_id).content_hash  # loaded: no query
    return Try(attempt.id, number, attempt.container_label, service.name, files, params, analysis.outputs, target,
               workspace, source, workspace.attempt_output(step.position, number), version)


def _substitution(session: Session, attempts: list[schema.StepAttempt], attempt: Try) -> Try:
    """``attempt``, saying which service it replaced and why when self-healing chose it."""
    decision = Decision.of(attempts[-1].decision) if attempts else None
    if decision is None or decision.action is not TryAction.SUBSTITUTE:
        return attempt
    replaced = stored(session, schema.Microservice, attempts[-1].microservice_id).name
    return dataclasses.replace(attempt, replaced=replaced, reason=decision.reason)


def run_try(attempt: Try, position: int, *, runtime: Runtime, settings: Settings, limits: Limits | None = None,
            promote: bool = True, observe: TryObserver | None = None) -> tuple[InvocationResult, Diagnosis | None]:
    """Run a recorded try (beating, so the reaper knows the worker lives), check its output and record the outcome;
    with ``promote`` a good output becomes the step's output at once."""
    invocation = Invocation(attempt.service, attempt.files, attempt.source, attempt.output, attempt.params,
                            limits or settings.step_limits, {ATTEMPT_LABEL: attempt.label})
    with beating(attempt.attempt_id, settings):
        try:
            result = runtime.run(invocation)
        except RuntimeUnavailable as exc:
            result = InvocationResult(exit_code=-1, stdout="", stderr=f"error: {exc}", seconds=0.0)
            _record_attempt(attempt, result, Diagnosis(ErrorClass.ENVIRONMENT, str(exc)), position, settings,
                            promote=promote)
            raise
        problems = (check_bundle(attempt.output, target=attempt.target, expected_outputs=attempt.expected_outputs,
                                 source=attempt.source) if result.ok else [])
    diagnosis = diagnose(result) if not result.ok else _contract_diagnosis(problems)
    _record_attempt(attempt, result, diagnosis, position, settings, promote=promote)
    if observe:
        observe(attempt, diagnosis)
    return result, diagnosis


def run_step(execution_id: int, position: int, *, runtime: Runtime, settings: Settings,
             limits: Limits | None = None, self_healing: bool = True, observe: TryObserver | None = None) -> StepResult:
    """Run one try of a step: close tries a dead worker left open, heal if the previous try failed, then run,
    record and check the output.

    Raises ``StepFailed`` when the try failed (Airflow retries), ``RuntimeUnavailable`` when the runtime cannot
    run anything here (no retry helps; the try is recorded as an environment failure with the reason). ``limits``
    default to the configured ones (``Settings.step_limits``)."""
    close_lost_tries(execution_id, position, settings=settings)
    heal(execution_id, position, settings=settings, self_healing=self_healing)
    with session_scope(settings) as session:
        execution = stored(session, schema.Execution, execution_id)
        step = step_at(session, execution.pipeline_id, position)
        attempts = tries_of(session, execution_id, step.id)
        if step_outcome(attempts) == StepStatus.COMPLETED:
            return StepResult(position=position, skipped=True)
        attempt = _substitution(session, attempts, open_try(session, execution, step, *_next_try(step, attempts)))
    result, diagnosis = run_try(attempt, position, runtime=runtime, settings=settings, limits=limits,
                                observe=observe)
    if diagnosis:
        raise StepFailed(f"step {position} ({attempt.service}) failed: {diagnosis}")
    return StepResult(position=position, microservice=attempt.service, attempt=attempt.attempt, seconds=result.seconds)


def _contract_diagnosis(problems: list[str]) -> Diagnosis | None:
    """A broken output bundle is a failure too; non-finite numbers in it are numerical instability."""
    if not problems:
        return None
    numeric = any("non-finite" in problem for problem in problems)
    return Diagnosis(ErrorClass.NUMERICAL if numeric else ErrorClass.CONTRACT, "; ".join(problems))


def _record_attempt(attempt: Try, result: InvocationResult, diagnosis: Diagnosis | None, position: int,
                    settings: Settings, *, promote: bool) -> None:
    with session_scope(settings) as session:
        row = stored(session, schema.StepAttempt, attempt.attempt_id)
        step = stored(session, schema.PipelineStep, row.step_id)
        row.finished_at, row.peak_mb = datetime.now(UTC), result.peak_mb
        if result.isolation:  # what contained the services, in the run's trace (loud when nothing did)
            execution = stored(session, schema.Execution, row.execution_id, with_for_update=True)
            seen = set(execution.trace.get("isolation", [])) | {result.isolation}
            execution.trace = {**execution.trace, "isolation": sorted(seen)}
        if diagnosis:
            row.status, row.error_class = StepStatus.FAILED, diagnosis.error_class.value
            row.error_text = (result.stderr or diagnosis.summary)[-8000:]
            if promote:
                step.status = StepStatus.PENDING
        else:
            row.status = StepStatus.COMPLETED
            if promote:
                step.status = StepStatus.COMPLETED
                promote_output(attempt.output, attempt.workspace.step_output(position))
    number = attempt.attempt
    # After the outcome is committed: a full disk must not lose the record of the try (nor leave it 'running').
    log = attempt.workspace.root / "logs" / f"{position:02d}-{number}.log"
    try:
        log.parent.mkdir(exist_ok=True)
        peak = f"peak memory {result.peak_mb} MB, " if result.peak_mb else ""
        log.write_text(f"exit code {result.exit_code} in {result.seconds} s, {peak}"
                       f"isolation: {result.isolation or 'unknown'}\n"
                       f"--- stdout\n{result.stdout}\n"
                       f"--- stderr\n{result.stderr}\n", encoding="utf-8")
    except OSError as exc:
        logger.warning("the log of step %s try %s was not written: %s", position, number, exc)
