"""A whole stored pipeline run in this process, step after step, with the tries its Airflow DAG would give.

The generated Airflow DAG is the production path (scheduling, retries with backoff, the UI). The benchmark
runs hundreds of pipelines and needs neither a scheduler nor its ~12 s of overhead per run, so it drives the
same step functions directly; a step whose inputs did not complete is skipped, as Airflow's
``upstream_failed`` would.
"""

from __future__ import annotations

from collections.abc import Callable

from dagsmith.config import Settings
from dagsmith.execution import attempts, closing
from dagsmith.execution import run as execution
from dagsmith.execution.search import run_search
from dagsmith.healing import policy as healing
from dagsmith.models.execution import StepResult
from dagsmith.runtime.base import Runtime, RuntimeUnavailable
from dagsmith.store import schema
from dagsmith.store.db import session_scope, stored
from dagsmith.store.pipelines import steps_of

#: Tries per step without self-healing: the first one and three retries.
RETRY_ONLY_TRIES = 4


def run_pipeline(pipeline_id: int, dataset: str, *, runtime: Runtime, settings: Settings, user: str = "anonymous",
                 self_healing: bool = True, on_step: Callable[[StepResult], None] | None = None) -> dict:
    """Run every step of the pipeline; returns ``finish``'s summary plus the execution id and its trace."""
    with session_scope(settings) as session:
        steps = [(s.position, list(s.depends_on), len(s.alternatives), s.search.get("candidates"))
                 for s in steps_of(session, pipeline_id)]
    tries = (healing.retries_for([n for _, _, n, _ in steps]) + 1) if self_healing else RETRY_ONLY_TRIES
    execution_id = execution.start(pipeline_id, dataset, user=user, run_id=None, settings=settings)
    completed: set[int] = set()
    for position, depends_on, _, candidates in steps:
        if not set(depends_on) <= completed:
            continue
        outcome = (_search(execution_id, position, candidates, runtime, settings) if candidates else
                   _step(execution_id, position, tries, runtime, settings, self_healing))
        if outcome is not None:
            completed.add(position)
            if on_step:
                on_step(outcome)
    summary = closing.finish(execution_id, settings=settings)
    with session_scope(settings) as session:
        trace = stored(session, schema.Execution, execution_id).trace
    return {**summary, "trace": trace}


def _step(execution_id: int, position: int, tries: int, runtime: Runtime, settings: Settings,
          self_healing: bool) -> StepResult | None:
    """A step's tries until one completes; None when none did."""
    for _ in range(tries):
        try:
            return attempts.run_step(execution_id, position, runtime=runtime, settings=settings,
                                      self_healing=self_healing)
        except attempts.StepFailed:
            continue
        except (healing.CandidatesExhausted, RuntimeUnavailable):
            return None
    return None


def _search(execution_id: int, position: int, candidates: list[str], runtime: Runtime,
            settings: Settings) -> StepResult | None:
    """A model search's candidates, then its selection; None when no candidate completed."""
    try:
        return run_search(execution_id, position, candidates, runtime=runtime, settings=settings)
    except (healing.CandidatesExhausted, RuntimeUnavailable):
        return None
