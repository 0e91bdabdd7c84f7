"""A modelling step's search at run time: every candidate model runs on the step's input, the best one wins.

The pipeline DAG runs one task per candidate (side by side where the executor allows), or one task that fits them
side by side where the run's tasks run one at a time (``run_candidates``), and then a selection task. Each
candidate is a try of the step, tuned by the service itself within its budget and scored on the training rows
(``dagsmith_kit.search``), raced against the others: while it runs it is handed their progress so far, running or
completed (``Race``; ``dagsmith_kit.halving``), so a candidate that trails at equal time stops early;
a failed candidate is one fewer to choose from. The selection keeps the best validation score, hands on a blend of
the candidates instead when that validates better (``execution.blending``), makes the output the step's output with
a table of what was tried, and marks the others as outperformed, so execution history credits the winners.
"""

from __future__ import annotations

import json
import logging
import math
import os
import secrets
import stat
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from dagsmith.config import Settings
from dagsmith.execution import blending, threshold
from dagsmith.execution.attempts import StepFailed, TryObserver, open_try, run_try
from dagsmith.execution.blending import Blend
from dagsmith.execution.deadline import OutOfTime, candidate_share
from dagsmith.execution.heartbeat import every
from dagsmith.execution.workspace import Workspace, promote_output
from dagsmith.healing.classify import telling_line
from dagsmith.healing.policy import CandidatesExhausted
from dagsmith.models.execution import Decision, SearchSummary, StepResult, StepStatus, TryAction
from dagsmith.models.plan import ModelSearch
from dagsmith.runtime.base import Limits, Runtime
from dagsmith.store import schema
from dagsmith.store.db import session_scope, stored
from dagsmith.store.pipelines import service_names, step_at, tries_of
from dagsmith_kit import Bundle
from dagsmith_kit.bundle import METRICS_FILE
from dagsmith_kit.halving import PROGRESS_FILE, RIVALS_FILE, Rival
from dagsmith_kit.portfolio import clean
from dagsmith_kit.search import SEARCH_FILE

log = logging.getLogger(__name__)

#: Seconds between two hand-overs of a running candidate's rivals: rungs are checked between configurations, and
#: where stopping early saves much, a configuration takes longer than this.
RELAY_SECONDS = 1.0
#: The largest search or progress file read from a candidate's output (a search's holds a few hundred points).
MAX_JSON_BYTES = 4 * 1024 * 1024


def run_candidate(execution_id: int, position: int, candidate: str, *, runtime: Runtime, settings: Settings,
                  limits: Limits | None = None, observe: TryObserver | None = None,
                  at_once: int | None = None) -> StepResult:
    """Run one candidate of the step's search as a try of the step, raced against the others (``Race``); its
    output waits for the selection. ``at_once``: how many of the step's candidates run side by side (None: all, a
    task each), which a goal's time budget is shared by.

    Raises ``StepFailed`` when the candidate failed (it is then out of the running), ``OutOfTime`` when the goal's
    time budget is spent and another candidate has completed, and ``RuntimeUnavailable`` when nothing can run
    here."""
    with session_scope(settings) as session:
        execution = stored(session, schema.Execution, execution_id)
        step = step_at(session, execution.pipeline_id, position)
        search = ModelSearch.model_validate(step.search)
        if candidate not in search.candidates:
            raise LookupError(f"'{candidate}' is not a candidate of step {position}'s search")
        service_id = session.scalar(select(schema.Microservice.id).where(schema.Microservice.name == candidate))
        params = search.params_for(candidate)
        share = candidate_share(session, execution, step, search, at_once)
        if share:
            params["search"]["budget_seconds"] = share.seconds
        race = Race(execution_id, step.id, position, Workspace.of(execution), service_names(session))
        if rivals := race.rivals(session, running=False):  # those still running are handed over as they grow
            params["search"]["rivals"] = rivals
        attempt = open_try(session, execution, step, service_id, params,
                           decision=Decision(action=TryAction.CANDIDATE, reason=share.reason if share else "").stored())
    with race.relayed_to(attempt.attempt, settings) if len(search.candidates) > 1 else nullcontext():
        result, diagnosis = run_try(attempt, position, runtime=runtime, settings=settings, limits=limits,
                                    promote=False, observe=observe)
    if diagnosis:
        raise StepFailed(f"candidate {candidate} of step {position} failed: {diagnosis}")
    return StepResult(position=position, microservice=candidate, attempt=attempt.attempt, seconds=result.seconds)


@dataclass(frozen=True)
class Race:
    """A modelling step's candidates in one run, racing: each is handed the others' progress while it runs."""

    execution_id: int
    step_id: int
    position: int
    workspace: Workspace
    names: dict[int | None, str]

    def rivals(self, session: Session, but: int | None = None, *, running: bool = True) -> list[dict[str, Any]]:
        """The progress so far of the step's candidates completed and (with ``running``) running, but try number
        ``but``: how each one's best score grew, from its untrusted output (``search.json`` once done,
        ``PROGRESS_FILE`` while it runs; only validated points are handed on)."""
        racing = (StepStatus.COMPLETED, StepStatus.RUNNING) if running else (StepStatus.COMPLETED,)
        found = []
        for attempt in tries_of(session, self.execution_id, self.step_id):
            if (Decision.action_of(attempt.decision) is not TryAction.CANDIDATE or attempt.attempt == but
                    or attempt.status not in racing):
                continue
            output = self.workspace.attempt_output(self.position, attempt.attempt)
            shown = _search_file(output) or _untrusted_json(output / PROGRESS_FILE)
            if rival := Rival.of({"name": self.names.get(attempt.microservice_id, "another model"),
                                 "progress": shown.get("progress")}):
                found.append({"name": rival.name, "progress": [list(point) for point in rival.progress]})
        return found

    @contextmanager
    def relayed_to(self, attempt: int, settings: Settings) -> Iterator[None]:
        """While try ``attempt`` runs, hand it the others' progress (``RIVALS_FILE`` in its output folder) every
        ``RELAY_SECONDS`` it changed: candidates side by side race from their first configurations, not only once
        one has finished."""
        handed: list[list[dict[str, Any]]] = [[]]
        over = threading.Event()  # a relay still reading when the try ends writes nothing after it

        def relay() -> None:
            try:
                with session_scope(settings) as session:
                    rivals = self.rivals(session, but=attempt)
            except SQLAlchemyError as exc:
                log.warning("the rivals of try %s of step %s were not read: %s", attempt, self.position, exc)
                return
            if (not over.is_set() and rivals != handed[0]
                    and write_rivals(self.workspace.attempt_output(self.position, attempt), rivals)):
                handed[0] = rivals

        with every(RELAY_SECONDS, relay, f"dagsmith-race-{self.execution_id}-{self.position}-{attempt}"):
            try:
                yield
            finally:
                over.set()


def write_rivals(output: Path, rivals: list[dict[str, Any]]) -> bool:
    """Put ``RIVALS_FILE`` into a running candidate's output folder, which its untrusted code may change at the same
    time: the file is created new beside it (never through a link left there) and renamed over the old one, which
    replaces a link rather than following it. A folder that does not take it (or is not there yet) leaves the
    candidate as it was: False."""
    written = json.dumps(rivals).encode()
    partial = f"{RIVALS_FILE}.{secrets.token_hex(8)}"
    try:
        folder = os.open(output, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        handle = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=folder)
        with os.fdopen(handle, "wb") as file:
            file.write(written)
        os.replace(partial, RIVALS_FILE, src_dir_fd=folder, dst_dir_fd=folder)
        return True
    except OSError as exc:
        log.info("could not hand the search's rivals to %s: %s", output, exc)
        with suppress(OSError):
            os.unlink(partial, dir_fd=folder)
        return False
    finally:
        os.close(folder)


def run_candidates(execution_id: int, position: int, candidates: Sequence[str], *, runtime_for: Callable[[], Runtime],
                   settings: Settings) -> list[StepResult]:
    """Run the step's candidates as ``run_candidate`` does, ``settings.candidates_at_once`` side by side in rank order
    (a thread each, waiting on its own try's sandbox or container, from ``runtime_for``), where one task runs them all
    because the run's tasks run one at a time: one after another, a search would take its candidates' budgets end to
    end. The candidates race each other as they run (``Race``).

    A failed candidate, or one the time budget leaves out, is one fewer to choose from, as its own task's would be:
    the results of those that completed. Raises ``RuntimeUnavailable`` when nothing can run here."""
    with ThreadPoolExecutor(max_workers=settings.candidates_at_once, thread_name_prefix="model-search") as pool:
        running = [(name, pool.submit(run_candidate, execution_id, position, name, runtime=runtime_for(),
                                      settings=settings, at_once=settings.candidates_at_once))
                   for name in candidates]
    completed = []
    for name, future in running:
        try:
            completed.append(future.result())
        except (StepFailed, OutOfTime) as exc:
            log.warning("candidate %s of step %s: %s", name, position, exc)
    return completed


def _validation(output: Path) -> dict:
    """The validation figures a candidate wrote (read as ``_untrusted_json`` reads its output)."""
    return {key: float(value) for key, value in _untrusted_json(output / METRICS_FILE).items() if key in
            ("validation_score", "validation_baseline", "search_trials", "search_seconds")
            and isinstance(value, int | float) and math.isfinite(value)}


def _search_file(output: Path) -> dict:
    """What a candidate's search wrote (``SEARCH_FILE``)."""
    return _untrusted_json(output / SEARCH_FILE)


def _untrusted_json(path: Path) -> dict:
    """A JSON object from a file an untrusted service wrote; anything else there (unreadable, too large, a link, a
    pipe that would never answer) counts as nothing."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return {}
    with os.fdopen(handle, "rb") as file:
        state = os.fstat(file.fileno())
        if not stat.S_ISREG(state.st_mode) or state.st_size > MAX_JSON_BYTES:
            return {}
        try:
            found = json.loads(file.read())
        except (OSError, ValueError):
            return {}
    return found if isinstance(found, dict) else {}


def _chosen_params(output: Path) -> dict | None:
    """The configuration a candidate's search chose, as execution history keeps it (only a few plain values
    survive, ``dagsmith_kit.portfolio.clean``)."""
    return clean(_search_file(output).get("params"))


def _table(search: ModelSearch, rows: list[dict], winner: str, blend: Blend | None) -> str:
    lines = [f"## Model search\n\n{search.reason}.\n",
             f"| model | validation {search.metric} | trivial predictor | configurations | seconds | outcome |",
             "|---|---|---|---|---|---|"]
    for row in rows:
        figures = row["validation"]

        def shown(key: str, digits: int = 4, figures: dict = figures) -> str:
            return f"{figures[key]:.{digits}f}" if key in figures else "–"

        outcome = ("chosen" if row["name"] == winner else f"failed: {row['error']}" if row["error"]
                   else "blended" if blend and row["name"] in blend.weights else TryAction.OUTPERFORMED.value)
        lines.append(f"| {row['name']} | {shown('validation_score')} | {shown('validation_baseline')} | "
                     f"{shown('search_trials', 0)} | {shown('search_seconds', 1)} | {outcome} |")
    ran = {row["name"] for row in rows}
    lines += [f"| {name} | – | – | – | – | not run: the time budget was spent |"
              for name in search.candidates if name not in ran]
    budgets = [f"{row['name']}: {row['budget']}" for row in rows if row["budget"]]
    under = f"\n\nBudgets under the goal's time budget: {'; '.join(budgets)}." if budgets else ""
    return "\n".join(lines) + under


def select_model(execution_id: int, position: int, *, settings: Settings) -> StepResult:
    """Choose the step's model among this run's completed candidates by validation score (the recommender's
    order breaks ties and ranks candidates that report none), make its output the step's output, and record why.

    Raises ``CandidatesExhausted`` when no candidate completed."""
    with session_scope(settings) as session:
        execution = stored(session, schema.Execution, execution_id, with_for_update=True)
        step = step_at(session, execution.pipeline_id, position)
        search = ModelSearch.model_validate(step.search)
        workspace = Workspace.of(execution)
        names = service_names(session)
        order = {name: i for i, name in enumerate(search.candidates)}
        tried = sorted((a for a in tries_of(session, execution_id, step.id)
                        if Decision.action_of(a.decision) is TryAction.CANDIDATE),
                       key=lambda a: (order.get(names[a.microservice_id], len(order)), a.attempt))
        rows: list[dict[str, Any]] = []
        for attempt in tried:
            output = workspace.attempt_output(position, attempt.attempt)
            for raced in (RIVALS_FILE, PROGRESS_FILE):  # how it raced while it ran; no part of what it made
                with suppress(OSError):
                    (output / raced).unlink(missing_ok=True)
            completed = attempt.status == StepStatus.COMPLETED
            rows.append({"name": names[attempt.microservice_id], "attempt": attempt, "output": output,
                         "validation": _validation(output) if completed else {},
                         "params": _chosen_params(output) if completed else None,
                         "budget": Decision.model_validate(attempt.decision).reason,  # before it is overwritten
                         "error": telling_line(attempt.error_text or "") if attempt.status == StepStatus.FAILED
                         else None})
        finished = sorted((r for r in rows if r["attempt"].status == StepStatus.COMPLETED),  # stable: plan order
                          key=lambda r: -r["validation"].get("validation_score", -math.inf))  # breaks ties
        mixed: Blend | None = None
        line: threshold.Threshold | None = None
        if not tried:
            reason = f"step {position} ({step.stage}): no model ran, the steps before it did not complete"
        elif not finished:
            reason = (f"step {position} ({step.stage}): every model of the search failed: "
                      + "; ".join(f"{r['name']} ({r['attempt'].error_class}: {r['error']})" for r in rows))
            if tried:  # on the last try, where a step's outcome is read
                last = max(tried, key=lambda a: a.attempt)
                last.decision = Decision(action=TryAction.GIVE_UP, reason=reason).stored()
            step.status = StepStatus.FAILED
        else:
            best = finished[0]
            score = best["validation"].get("validation_score")
            reason = (f"'{best['name']}' has the best validation {search.metric} ({score:.4f}) of "
                      f"{len(finished)} model(s) that completed" if score is not None else
                      f"'{best['name']}' is the best-ranked model that completed (no validation score to compare)")
            mixed = blending.blend(search.metric, workspace.step_input(step.depends_on), best["output"],
                                   {r["name"]: r["output"] for r in finished}) if search.blend else None
            handed_on = mixed.describe(search.metric) if mixed else None
            if handed_on:
                reason = f"{reason}; handed on: {handed_on}"
            line = threshold.relabel(search.metric, workspace.step_input(step.depends_on), best["output"],
                                     {r["name"]: r["output"] for r in finished}, mixed)
            for row in finished[1:]:
                if mixed and row["name"] in mixed.weights:
                    row["attempt"].decision = Decision(action=TryAction.SELECTED, reason=reason).stored()
                else:
                    row["attempt"].status = StepStatus.SKIPPED
                    row["attempt"].decision = Decision(action=TryAction.OUTPERFORMED, reason=reason).stored()
            best["attempt"].decision = Decision(action=TryAction.SELECTED, reason=reason).stored()
            Bundle.open(best["output"]).append_report(_table(search, rows, best["name"], mixed) + (
                f"\n\nThe model handed on is {handed_on}." if handed_on else "") + (
                f"\n\nLabels: {line.describe()}." if line else ""))
            promote_output(best["output"], workspace.step_output(position))
            step.status = StepStatus.COMPLETED
        winner = finished[0]["name"] if finished else None
        summary = SearchSummary(
            metric=search.metric, winner=winner, reason=reason, threshold=line.at if line else None,
            blend=mixed.weights if mixed else None, model=mixed.label() if mixed else winner,
            table=search.table,  # with each candidate's chosen params: what later searches start from
            candidates=[{"name": r["name"], "error": r["error"], "params": r["params"], **r["validation"]}
                        for r in rows])
        execution.trace = {**execution.trace, "search": {**execution.trace.get("search", {}),
                                                         str(position): summary.model_dump(mode="json")}}
    if not finished:
        raise CandidatesExhausted(reason)
    return StepResult(position=position, search=summary)
