"""Running a stored pipeline, step by step, with self-healing between tries.

Airflow calls these functions from a pipeline's child DAG (one task per step): ``start`` creates the
execution and its workspace, ``run_step`` runs one step's current microservice, ``heal`` (called from the
retry callback and again at the start of every try, so a lost callback changes nothing) swaps in the
next-ranked untried candidate, and ``finish`` closes the execution and feeds the learned patterns.
Everything is recorded in PostgreSQL; files live in the execution's workspace.
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.orm import Session

from dagsmith.catalog import repository
from dagsmith.config import Settings
from dagsmith.data.staging import loadable
from dagsmith.execution.contract import check_bundle
from dagsmith.execution.heartbeat import beating
from dagsmith.execution.reaper import ATTEMPT_LABEL, INTERRUPTED, close_lost, fail_run, reap
from dagsmith.execution.specs import write_spec
from dagsmith.healing.classify import RETRY_SAME, Diagnosis, ErrorClass, diagnose, telling_line
from dagsmith.healing.interpret import interpret
from dagsmith.learning.record import record_execution
from dagsmith.models.catalog import Analysis, AnalysisMode, Stage, TaskType
from dagsmith.models.execution import Decision, StepStatus, TryAction
from dagsmith.models.plan import DagStep, PipelineStatus
from dagsmith.models.reasoning import Provenance
from dagsmith.reasoning.llm import ModelReasoner, ReasonerFailed, decide, model_reasoner
from dagsmith.registry.runs import register_run
from dagsmith.runtime.base import Invocation, InvocationResult, Limits, Runtime, RuntimeUnavailable
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from dagsmith.store.pipelines import service_names, step_at, steps_of
from dagsmith_kit import Bundle, BundleError

if TYPE_CHECKING:
    from dagsmith.execution.quality import Quality

logger = logging.getLogger(__name__)
#: Identical failures of one service after which it is not tried again, even for transient errors.
MAX_SAME_FAILURES = 2
#: How much of each attempt's error the run's trace keeps (the full text stays in the attempt's record and log).
TRACE_ERROR_CHARS = 300


def retries_for(alternative_counts: list[int]) -> int:
    """Retries a step task gets: one per alternative, plus one for a transient error of the first service."""
    return max(alternative_counts, default=-1) + 1


class StepFailed(Exception):
    """The step's try failed; Airflow retries it, and healing decides what the next try runs."""


class RunStopped(StepFailed):
    """The run was closed while this step waited to start a try (stopped, or its worker taken for dead)."""


class CandidatesExhausted(Exception):
    """Every candidate for the step has failed; the step and the pipeline fail, diagnostics kept."""


@dataclass(frozen=True)
class Workspace:
    root: Path

    @property
    def input(self) -> Path:
        return self.root / "input"

    def step_output(self, position: int) -> Path:
        return self.root / "steps" / f"{position:02d}"

    def attempt_output(self, position: int, attempt: int) -> Path:
        return self.root / "attempts" / f"{position:02d}-{attempt}"

    def step_input(self, depends_on: list[int]) -> Path:
        """The bundle a step reads: its predecessor's output, or the run's input for a first step."""
        return self.step_output(depends_on[0]) if depends_on else self.input


def take_over(execution_id: int, pipeline_id: int, run_id: str | None, *, settings: Settings) -> int:
    """The Airflow run ``run_id`` carries on an execution recorded before it began (the local CLI's), which must be
    this pipeline's and not yet taken over by another run."""
    with session_scope(settings) as session:
        recorded = session.get(schema.Execution, execution_id, with_for_update=True)
        if recorded is None or recorded.pipeline_id != pipeline_id or recorded.airflow_run_id is not None:
            raise LookupError(f"execution {execution_id} is not a run of pipeline {pipeline_id} waiting to begin")
        recorded.airflow_run_id = run_id
        return execution_id


def abandon(execution_id: int, reason: str, *, settings: Settings) -> None:
    """Fail a run still open once its Airflow run is over (it ended before ``finish``): nothing is left running."""
    with session_scope(settings) as session:
        run = session.get(schema.Execution, execution_id, with_for_update=True)
        if run.status == PipelineStatus.RUNNING:
            fail_run(session, run, datetime.now(UTC), reason)


def start(pipeline_id: int, dataset: str, *, user: str, run_id: str | None, settings: Settings) -> int:
    """Create the execution, its isolated workspace with a copy of the dataset, and reset the steps (after closing
    what dead workers left running, so nothing stays 'running' forever)."""
    reap(settings)
    source = Path(dataset)
    if not source.is_file():
        raise FileNotFoundError(f"the dataset {dataset} does not exist")
    with session_scope(settings) as session:
        pipeline = session.get(schema.Pipeline, pipeline_id)
        if pipeline is None:
            raise LookupError(f"no pipeline {pipeline_id}")
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        root = settings.home / "workspaces" / f"pipeline-{pipeline_id}-{stamp}-{secrets.token_hex(3)}"  # never shared
        roles = pipeline.plan.get("roles", {})
        bundle = Bundle.create(root / "input", target=pipeline.target, task_type=pipeline.task_type,
                               id_columns=roles.get("id_columns"), time_column=roles.get("time_column"),
                               excluded_columns=roles.get("excluded_columns"))
        with loadable(source) as table:
            bundle.add_source(table)
        execution = schema.Execution(pipeline_id=pipeline_id, owner=user, status=PipelineStatus.RUNNING,
                                     dataset=str(source), workspace=str(root), airflow_run_id=run_id, trace={})
        session.add(execution)
        pipeline.status = PipelineStatus.RUNNING
        for step in steps_of(session, pipeline_id):
            step.status = StepStatus.PENDING
        session.flush()
        return execution.id


def tries_of(session: Session, execution_id: int, step_id: int) -> list[schema.StepAttempt]:
    return list(session.scalars(select(schema.StepAttempt).where(
        schema.StepAttempt.execution_id == execution_id, schema.StepAttempt.step_id == step_id)
        .order_by(schema.StepAttempt.attempt)))


def _service(session: Session, microservice_id: int) -> tuple[schema.Microservice, dict, Analysis]:
    service = session.get(schema.Microservice, microservice_id)
    version = session.get(schema.MicroserviceVersion, service.current_version_id)
    return service, version.files, repository.latest_analysis(session, version.id, AnalysisMode.CODE)


def _carried_params(params: dict, analysis: Analysis, diagnosis: ErrorClass) -> dict:
    """The failed step's parameters the substitute also reads, lightened after a resource failure."""
    accepted = {p.name for p in analysis.parameters}
    carried = {k: v for k, v in params.items() if k in accepted}
    if diagnosis is ErrorClass.RESOURCE:
        for name in ("n_estimators", "max_iter"):
            if isinstance(carried.get(name), int):
                carried[name] = max(1, carried[name] // 2)
    return carried


def _substitute(step: schema.PipelineStep, last: schema.StepAttempt, alternative: dict, analysis: Analysis,
                error: ErrorClass, reason: str) -> Decision:
    return Decision(action=TryAction.SUBSTITUTE, replaced=last.microservice_id, to=alternative["id"],
                    to_name=alternative["name"], params=_carried_params(last.params, analysis, error), reason=reason)


def _decide(session: Session, step: schema.PipelineStep, attempts: list[schema.StepAttempt],
            self_healing: bool, reasoner: ModelReasoner | None) -> Decision:
    """What the next try of a failed step runs: the same service (transient errors), a substitute, or nothing;
    read by the configured model when there is one and its choice is a real untried candidate."""
    last = attempts[-1]
    error = ErrorClass(last.error_class or ErrorClass.UNKNOWN)
    if not self_healing:
        return Decision(action=TryAction.RETRY, reason="self-healing is off; the same service runs again")
    same = [a for a in attempts if a.microservice_id == last.microservice_id and a.error_class == last.error_class]
    tried = {a.microservice_id for a in attempts}
    untried = [alt for alt in step.alternatives if alt["id"] not in tried]

    def by_rules() -> Decision:
        if error in RETRY_SAME and len(same) < MAX_SAME_FAILURES:
            return Decision(action=TryAction.RETRY, reason=f"{error.value} errors pass; the same service runs again")
        if not untried:
            return Decision(action=TryAction.GIVE_UP,
                            reason=f"step {step.position} ({step.stage}): every candidate failed; the last error was "
                                   f"{error.value}: {(last.error_text or '')[-300:]}")
        best = untried[0]
        return _substitute(step, last, best, _service(session, best["id"])[2], error,
                           f"{error.value} in the previous service; '{best['name']}' is the best-ranked untried "
                           "candidate")

    def by_model(model: ModelReasoner) -> tuple[Decision, Provenance]:
        failed = session.get(schema.Microservice, last.microservice_id).name
        analyses = {alt["name"]: _service(session, alt["id"])[2] for alt in untried}
        reading, provenance = interpret(model, step.stage, failed, last.error_text or "", analyses)
        if reading.action == TryAction.RETRY:
            if len(same) >= MAX_SAME_FAILURES:
                raise ReasonerFailed(f"{model.name} asked to retry '{failed}', which already failed {len(same)} "
                                     "times the same way", provenance)
            return Decision(action=TryAction.RETRY, reason=reading.reason), provenance
        alternative = next(alt for alt in untried if alt["name"] == reading.substitute)
        return _substitute(step, last, alternative, analyses[alternative["name"]], reading.error_class,
                           reading.reason), provenance

    decision, provenance = decide(reasoner if untried else None, by_model, by_rules)
    return decision.model_copy(update={"provenance": provenance.model_dump(mode="json")})


def heal(execution_id: int, position: int, *, settings: Settings, self_healing: bool = True) -> Decision | None:
    """Decide what the next try of a failed step runs; idempotent (a decision is recorded once per failure).

    Returns the decision, or None when there is nothing to decide (no failure yet, or already decided).
    Raises ``CandidatesExhausted`` when no untried candidate is left (after recording that).
    """
    with session_scope(settings) as session:
        execution = session.get(schema.Execution, execution_id)
        step = step_at(session, execution.pipeline_id, position)
        attempts = tries_of(session, execution_id, step.id)
        if not attempts or attempts[-1].status != StepStatus.FAILED:
            return None
        decision = Decision.of(attempts[-1].decision)
        if decision is None:
            decision = _decide(session, step, attempts, self_healing, model_reasoner(settings))
            attempts[-1].decision = decision.stored()
            if decision.action is TryAction.SUBSTITUTE:
                step.microservice_id, step.params = decision.to, decision.params
            elif decision.action is TryAction.GIVE_UP:
                step.status = StepStatus.FAILED
        elif decision.action is not TryAction.GIVE_UP:
            return None
    if decision.action is TryAction.GIVE_UP:
        raise CandidatesExhausted(decision.reason)
    return decision


def close_lost_tries(execution_id: int, position: int, *, settings: Settings) -> int:
    """Mark the step's tries still 'running' as failed: Airflow runs one try of a task at a time, so when a new
    try starts, any try left running was cut off (kill -9, a lost machine). Transient, so healing retries. A run
    the reaper failed meanwhile is running again, unless it was interrupted (its CLI is gone)."""
    with session_scope(settings) as session:
        execution = session.get(schema.Execution, execution_id)
        step = step_at(session, execution.pipeline_id, position)
        lost = [a for a in tries_of(session, execution_id, step.id) if a.status == StepStatus.RUNNING]
        for attempt in lost:
            close_lost(attempt, datetime.now(UTC))
        if execution.status == PipelineStatus.FAILED and execution.finished_at is not None and \
                not (execution.error or "").startswith(INTERRUPTED):
            execution.status, execution.finished_at, execution.error = PipelineStatus.RUNNING, None, None
            session.get(schema.Pipeline, execution.pipeline_id).status = PipelineStatus.RUNNING
        return len(lost)


def _step_outcome(attempts: list[schema.StepAttempt]) -> str:
    """A step's state in one run, from that run's own tries: runs of one pipeline may overlap (several
    ``dagsmith run`` at once), so the step row, shared by them, cannot say what this run did."""
    if any(a.status == StepStatus.COMPLETED for a in attempts):
        return StepStatus.COMPLETED
    if attempts and Decision.action_of(attempts[-1].decision) is TryAction.GIVE_UP:
        return StepStatus.FAILED
    return StepStatus.PENDING if not attempts else attempts[-1].status


def _next_try(step: schema.PipelineStep, attempts: list[schema.StepAttempt]) -> tuple[int, dict]:
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


def open_try(session: Session, execution: schema.Execution, step: schema.PipelineStep, service_id: int,
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
    service, files, analysis = _service(session, service_id)
    attempt = schema.StepAttempt(execution_id=execution.id, step_id=step.id, attempt=number,
                                 microservice_id=service.id, params=params, status=StepStatus.RUNNING,
                                 decision=decision or {})
    session.add(attempt)
    step.status = StepStatus.RUNNING
    session.flush()
    workspace = Workspace(Path(execution.workspace))
    source = workspace.step_input(step.depends_on)
    target = session.get(schema.Pipeline, execution.pipeline_id).target
    version = session.get(schema.MicroserviceVersion, service.current_version_id).content_hash  # loaded: no query
    return Try(attempt.id, number, service.name, files, params, analysis.outputs, target, workspace, source,
               workspace.attempt_output(step.position, number), version)


def _substitution(session: Session, attempts: list[schema.StepAttempt], attempt: Try) -> Try:
    """``attempt``, saying which service it replaced and why when self-healing chose it."""
    decision = Decision.of(attempts[-1].decision) if attempts else None
    if decision is None or decision.action is not TryAction.SUBSTITUTE:
        return attempt
    replaced = session.get(schema.Microservice, attempts[-1].microservice_id).name
    return dataclasses.replace(attempt, replaced=replaced, reason=decision.reason)


def run_try(attempt: Try, position: int, *, runtime: Runtime, settings: Settings, limits: Limits | None = None,
            promote: bool = True, observe: TryObserver | None = None) -> tuple[InvocationResult, Diagnosis | None]:
    """Run a recorded try (beating, so the reaper knows the worker lives), check its output and record the outcome;
    with ``promote`` a good output becomes the step's output at once."""
    invocation = Invocation(attempt.service, attempt.files, attempt.source, attempt.output, attempt.params,
                            limits or settings.step_limits, {ATTEMPT_LABEL: str(attempt.attempt_id)})
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
             limits: Limits | None = None, self_healing: bool = True, observe: TryObserver | None = None) -> dict:
    """Run one try of a step: close tries a dead worker left open, heal if the previous try failed, then run,
    record and check the output.

    Raises ``StepFailed`` when the try failed (Airflow retries), ``RuntimeUnavailable`` when the runtime cannot
    run anything here (no retry helps; the try is recorded as an environment failure with the reason). ``limits``
    default to the configured ones (``Settings.step_limits``)."""
    close_lost_tries(execution_id, position, settings=settings)
    heal(execution_id, position, settings=settings, self_healing=self_healing)
    with session_scope(settings) as session:
        execution = session.get(schema.Execution, execution_id)
        step = step_at(session, execution.pipeline_id, position)
        attempts = tries_of(session, execution_id, step.id)
        if _step_outcome(attempts) == StepStatus.COMPLETED:
            return {"position": position, "status": StepStatus.COMPLETED, StepStatus.SKIPPED: True}
        attempt = _substitution(session, attempts, open_try(session, execution, step, *_next_try(step, attempts)))
    result, diagnosis = run_try(attempt, position, runtime=runtime, settings=settings, limits=limits,
                                observe=observe)
    if diagnosis:
        raise StepFailed(f"step {position} ({attempt.service}) failed: {diagnosis}")
    return {"position": position, "status": StepStatus.COMPLETED, "microservice": attempt.service,
            "attempt": attempt.attempt, "seconds": result.seconds}


def _contract_diagnosis(problems: list[str]) -> Diagnosis | None:
    """A broken output bundle is a failure too; non-finite numbers in it are numerical instability."""
    if not problems:
        return None
    numeric = any("non-finite" in problem for problem in problems)
    return Diagnosis(ErrorClass.NUMERICAL if numeric else ErrorClass.CONTRACT, "; ".join(problems))


def _record_attempt(attempt: Try, result: InvocationResult, diagnosis: Diagnosis | None, position: int,
                    settings: Settings, *, promote: bool) -> None:
    with session_scope(settings) as session:
        row = session.get(schema.StepAttempt, attempt.attempt_id)
        step = session.get(schema.PipelineStep, row.step_id)
        row.finished_at = datetime.now(UTC)
        if result.isolation:  # what contained the services, in the run's trace (loud when nothing did)
            execution = session.get(schema.Execution, row.execution_id, with_for_update=True)
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
        log.write_text(f"exit code {result.exit_code} in {result.seconds} s, isolation: {result.isolation or 'unknown'}\n"
                       f"--- stdout\n{result.stdout}\n"
                       f"--- stderr\n{result.stderr}\n", encoding="utf-8")
    except OSError as exc:
        logger.warning("the log of step %s try %s was not written: %s", position, number, exc)


def promote_output(output: Path, final: Path) -> None:
    """A try's output becomes the step's output, the one the next steps read."""
    final.parent.mkdir(parents=True, exist_ok=True)
    if final.exists():
        shutil.rmtree(final)
    output.rename(final)


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


def _held_out_quality(pipeline: schema.Pipeline, steps: list[schema.PipelineStep],
                      workspace: Workspace) -> Quality | None:
    """A supervised pipeline's held-out quality beside a trivial predictor's, from its model step's output."""
    # Imported here: scikit-learn would otherwise load on every parse of a pipeline DAG file.
    from dagsmith.execution.quality import Quality, supervised_quality

    task = TaskType(pipeline.task_type)
    models = [s for s in steps if s.stage == Stage.MODELLING.value]
    if not task.supervised or not models:
        return None
    try:
        bundle = Bundle.open(workspace.step_output(models[-1].position))
    except BundleError as exc:
        return Quality(False, {}, f"not assessable: {exc}")
    return supervised_quality(bundle, classification=task.classification)


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
        loaded = Bundle.open(workspace.step_output(steps[0].position))
        columns = list(loaded.table("data").columns) if "data" in loaded.table_names() else []
        return review(quality, Bundle.open(workspace.step_output(models[-1].position)), columns,
                      explained.get("drivers", []), classification=TaskType(pipeline.task_type).classification)
    except (BundleError, OSError, ValueError) as exc:
        logger.warning("could not check whether pipeline %s's result is too good to be true: %s", pipeline.id, exc)
        return None


def _answer(session: Session, pipeline: schema.Pipeline, steps: list[schema.PipelineStep],
            execution: schema.Execution, quality: Quality | None) -> str:
    """The paragraph that answers the goal (or says why there is none), with ``answer.md`` written beside the
    run's steps when the disk takes it."""
    # Imported here, like the quality: pandas and scikit-learn would otherwise load on every DAG file parse.
    from dagsmith.execution.answer import StepOutcome, summarise, write_answer
    from dagsmith.execution.specs import explanation

    names = service_names(session)
    workspace = Workspace(Path(execution.workspace))
    winners = {int(position): found.get("model") or found["winner"]  # runs before blending have no "model"
               for position, found in execution.trace.get("search", {}).items() if found.get("winner")}
    outcomes = [StepOutcome(s.position, s.stage, winners.get(s.position) or names.get(s.microservice_id, "?"),
                            workspace.step_output(s.position), list(s.depends_on)) for s in steps]
    summary = summarise(TaskType(pipeline.task_type), pipeline.target, outcomes, quality, execution.error)
    chosen = explanation(pipeline, [DagStep(position=o.position, stage=o.stage, microservice=o.service,
                                            search=s.search or None) for o, s in zip(outcomes, steps)])
    try:
        write_answer(workspace.root, pipeline.goal, summary, outcomes, chosen)
    except OSError as exc:  # a full disk loses the report, not the run's record: the answer stays in the trace
        logger.warning("could not write the report of execution %s: %s", execution.id, exc)
    return summary


def finish(execution_id: int, *, settings: Settings) -> dict:
    """Close the execution: its status, the trace of what ran, the held-out quality of a supervised model beside a
    trivial predictor's (a model no better than it fails the run), the answer to the goal (``answer.md``) and the
    patterns learned from it."""
    with session_scope(settings) as session:
        execution = session.get(schema.Execution, execution_id)
        pipeline = session.get(schema.Pipeline, execution.pipeline_id)
        steps = steps_of(session, pipeline.id)
        trace = []
        for step in steps:
            attempts = tries_of(session, execution_id, step.id)
            trace.append({
                "position": step.position, "stage": step.stage, "status": _step_outcome(attempts),
                "attempts": [{"microservice_id": a.microservice_id, "status": a.status, "error_class": a.error_class,
                              "error": (a.error_text or "")[:TRACE_ERROR_CHARS] or None, "decision": a.decision}
                             for a in attempts],
            })
        ok = all(t["status"] == StepStatus.COMPLETED for t in trace)
        execution.trace = {**execution.trace, "steps": trace}
        execution.error = None if ok else _failure(session, execution_id, steps, trace)
        quality = _held_out_quality(pipeline, steps, Workspace(Path(execution.workspace))) if ok else None
        if quality is not None and quality.valid:
            quality.review = _review(pipeline, steps, Workspace(Path(execution.workspace)), quality)
        if quality is not None:
            execution.trace = {**execution.trace, "quality": {"valid": quality.valid, "metrics": quality.metrics,
                                                              "problem": quality.problem, "review": quality.review}}
            if not quality.valid:
                ok, execution.error = False, f"every step ran, but the model is {quality.problem}"
        if execution.workspace:
            execution.trace = {**execution.trace, "answer": _answer(session, pipeline, steps, execution, quality)}
        execution.status = pipeline.status = PipelineStatus.COMPLETED if ok else PipelineStatus.FAILED
        execution.finished_at = datetime.now(UTC)
        execution.seconds = (execution.finished_at - execution.started_at).total_seconds()
        record_execution(session, execution, steps)
        final = Path(execution.workspace) / "steps"
        result = {"execution_id": execution_id, "status": execution.status, "error": execution.error,
                  "seconds": execution.seconds, "workspace": execution.workspace, "dataset": execution.dataset,
                  "metrics": quality.metrics if quality is not None else {},
                  "review": quality.review if quality is not None else None,
                  "outputs": sorted(str(p) for p in final.glob("*"))}
        pipeline_id = pipeline.id
    if result["status"] == PipelineStatus.COMPLETED:  # the pipeline's DAG docs open with its latest answer
        result["model_version"] = register_run(execution_id, settings=settings)
        write_spec(pipeline_id, settings)
    return result
