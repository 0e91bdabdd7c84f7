"""What the next try of a failed step runs: the same service again (transient errors), the best-ranked untried
candidate in its place, or nothing (every candidate failed). The rules decide, or the configured model when its
reading names a real untried candidate; the decision is recorded on the failed try, once.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from dagsmith.catalog.repository import current_service
from dagsmith.config import Settings
from dagsmith.healing.classify import RETRY_SAME, ErrorClass
from dagsmith.healing.interpret import interpret
from dagsmith.models.catalog import Analysis
from dagsmith.models.execution import Decision, StepStatus, TryAction
from dagsmith.models.reasoning import Provenance
from dagsmith.reasoning.llm import ModelReasoner, ReasonerFailed, decide, model_reasoner
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from dagsmith.store.pipelines import step_at, tries_of

#: Identical failures of one service after which it is not tried again, even for transient errors.
MAX_SAME_FAILURES = 2


#: Retries a failed step gets with self-healing off: the same service three more times, as plain Airflow retries.
PLAIN_RETRIES = 3


def retries_for(alternative_counts: list[int]) -> int:
    """Retries a step task gets: one per alternative, plus one for a transient error of the first service."""
    return max(alternative_counts, default=-1) + 1


class CandidatesExhausted(Exception):
    """Every candidate for the step has failed; the step and the pipeline fail, diagnostics kept."""


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
        return _substitute(step, last, best, current_service(session, best["id"])[2], error,
                           f"{error.value} in the previous service; '{best['name']}' is the best-ranked untried "
                           "candidate")

    def by_model(model: ModelReasoner) -> tuple[Decision, Provenance]:
        failed = session.get(schema.Microservice, last.microservice_id).name
        analyses = {alt["name"]: current_service(session, alt["id"])[2] for alt in untried}
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
