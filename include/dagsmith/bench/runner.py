"""Running the suite under one experiment: one automation attempt per task, each result persisted at once.

An attempt is the product's own path, timed from goal submission to final output: profile, intent,
recommendation and build (agents A1-A4), then the pipeline's Airflow DAG run with ``dag.test()`` in a child
process, as ``dagsmith run`` runs it (:func:`dagsmith.airflow.local.spawn_dag_test`): the child starts before
planning and gets Airflow ready meanwhile (after it when a fault is injected: the fault is in the child's
environment); its steps, retries and self-healing are Airflow's. Results go to their files (``bench.results``) as
they finish, so an interrupted benchmark resumes where it stopped; each run's Airflow log to
``<out>/logs/<experiment>/<task>.log``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import multiprocessing
import os
import random
import shutil
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select

from dagsmith import datasets
from dagsmith.agents.choices import ChoiceError
from dagsmith.agents.planner import EmptyCatalog, build_pipelines, plan, recommend_stages
from dagsmith.agents.profiler import profile_dataset
from dagsmith.agents.stages import ordered
from dagsmith.bench.degrade import degraded_catalog
from dagsmith.bench.experiments import Degradation, Experiment
from dagsmith.airflow.local import DagTest, spawn_dag_test
from dagsmith.bench import faults
from dagsmith.bench.faults import fault_for, main_step, single_model
from dagsmith.bench.autogluon_peer import AutoGluon, venv_path
from dagsmith.bench.peers import PEERS, Flaml, Peer, PeerResult, run_peer
from dagsmith.bench.results import ResultStore, TaskResult, peer_store
from dagsmith.bench.quality import assess
from dagsmith.bench.suite import BenchTask
from dagsmith.catalog.upload import sync
from dagsmith.config import CANDIDATES_AT_ONCE_VARIABLE, Settings, usable_cpus
from dagsmith.data.dictionary import write_sidecar
from dagsmith.data.sniffing import DatasetError
from dagsmith.embeddings import Embedder, default_embedder
from dagsmith.execution.specs import write_spec
from dagsmith.learning.patterns import load_history
from dagsmith.models.execution import Decision, RunSummary, StepStatus, TryAction
from dagsmith.models.intent import Intent, Question
from dagsmith.models.plan import PipelineSpec
from dagsmith.models.reasoning import Provenance
from dagsmith.store import schema
from dagsmith.store.databases import drop_database, named_database
from dagsmith.store.db import session_scope, stored

USERS = ("ana", "ben", "chen")
COHORTS = 5
ORDER_SEED = 7
PLANNING_ERRORS = (DatasetError, Question, EmptyCatalog, ChoiceError)


@dataclass(frozen=True)
class Scheduled:
    index: int  # position in the suite file (decides fault injection)
    cohort: int
    user: str
    task: BenchTask


def schedule(suite: list[BenchTask], only: set[str] | None = None) -> list[Scheduled]:
    """The suite in a fixed shuffled order cut into ``COHORTS`` cohorts (each a mix of task types), users taking
    turns; ``only`` keeps a subset without changing any task's cohort, user or injected fault."""
    indexed = list(enumerate(suite))
    random.Random(ORDER_SEED).shuffle(indexed)
    scheduled = [Scheduled(index, position * COHORTS // len(indexed), USERS[position % len(USERS)], task)
                 for position, (index, task) in enumerate(indexed)]
    return [s for s in scheduled if only is None or s.task.id in only]


@dataclass
class Bench:
    """Where a benchmark keeps its data, results and databases, and what it runs with."""

    out: Path
    catalog: Path
    settings: Settings  # the server the experiment databases live on
    embedder: Embedder | None  # None in what is sent to worker processes, which load their own
    runtime: str = "local"
    retry_delay_seconds: float | None = None  # before a step's first retry (then backing off); None: the spec's own

    def results(self, experiment: Experiment) -> ResultStore:
        return ResultStore(self.out / "results" / f"{experiment.slug}.jsonl")

    def peers(self, peer: str) -> ResultStore:
        return peer_store(self.out, peer)

    def peer(self, name: str) -> Peer:
        return Flaml() if name == "flaml" else AutoGluon(venv_path(self.settings.home))

    def _database(self, experiment: Experiment) -> str:
        tag = hashlib.sha256(str(self.out.resolve()).encode()).hexdigest()[:8]
        return f"dagsmith_bench_{tag}_{experiment.slug.replace('-', '_')}"

    def prepare(self, experiment: Experiment) -> Settings:
        """The experiment's database (created on first use) with the catalog, degraded if the experiment says."""
        settings = named_database(self.settings, self._database(experiment), home=self.out / "homes" / experiment.slug)
        catalog = self.catalog
        if experiment.degradation is not Degradation.NONE:
            catalog = degraded_catalog(self.catalog, experiment.degradation,
                                       self.out / "catalogs" / experiment.degradation.value)
        sync(catalog, settings, self.embedder)
        return settings

    def forget(self, experiment: Experiment) -> None:
        """Drop an experiment's results and database, so it starts over (for ``full``, the peers' results too: their
        budgets were its times)."""
        self.results(experiment).path.unlink(missing_ok=True)
        for peer in PEERS if experiment.name == "full" else ():
            self.peers(peer).path.unlink(missing_ok=True)
        drop_database(self.settings, self._database(experiment))

    def dataset(self, task: BenchTask) -> Path:
        """The task's data as a CSV file with its data dictionary beside it, written once and shared by every
        experiment."""
        path = self.out / "data" / f"{task.id}.csv"
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            frame = task.frame()
            if described := datasets.dictionary(task.dataset, list(frame.columns)):
                write_sidecar(path, described)
            partial = path.with_suffix(".partial")
            frame.to_csv(partial, index=False)
            partial.rename(path)
        return path


def _expert_pipeline(task: BenchTask, path: Path, user: str, experiment: Experiment, settings: Settings,
                     embedder: Embedder) -> PipelineSpec:
    """The task's reference pipeline (manual construction): its stages, and per stage the expert's first
    acceptable service among those the recommender found compatible, built by the same builder."""
    profile = profile_dataset(path)
    stages = ordered(list(task.reference))
    intent = Intent(goal=task.goal, task_type=task.task_type, target=task.target, required_stages=stages,
                    confidence=1.0, provenance=Provenance(reasoner="reference pipeline"),
                    reasons={"task_type": "given by the benchmark task", "target": "given by the benchmark task"})
    recommendation = recommend_stages(profile, intent, user=user, mode=experiment.mode, settings=settings,
                                      embedder=embedder)
    choices = {}
    for stage in stages:
        found = recommendation.for_stage(stage)
        names = {c.microservice for c in found.candidates} if found else set()
        pick = next((name for name in task.reference[stage] if name in names), None)
        if pick:
            choices[stage] = pick
    [spec] = build_pipelines(profile, [(intent, recommendation, choices)], data=path, user=user, settings=settings)
    return spec


def _cold(settings: Settings, steps: list[tuple[str, str]]) -> bool:
    with session_scope(settings) as session:
        history = load_history(session, None)
        ids = dict(session.execute(select(schema.Microservice.name, schema.Microservice.id)).all())
        counts = [history.counts(stage, ids[name]) for stage, name in steps if name in ids]
        return any(c.successes + c.failures == 0 for c in counts)


def attempt(scheduled: Scheduled, experiment: Experiment, bench: Bench, settings: Settings) -> TaskResult:
    """One automation attempt of one task; never raises (a crash is recorded as a failure with its cause)."""
    task = scheduled.task
    result = TaskResult(task=task.id, experiment=experiment.name, task_type=task.task_type,
                        cohort=scheduled.cohort, user=scheduled.user, success=False)
    path = bench.dataset(task)
    started = time.perf_counter()
    with contextlib.ExitStack() as stack:
        try:  # as ``dagsmith run``, Airflow gets ready while the agents plan; a fault must be in its environment
            ahead = None if experiment.inject_faults else stack.enter_context(_dag_test_child(bench, experiment, task,
                                                                                              settings))
        except Exception as exc:  # noqa: BLE001 - a benchmark records crashes instead of stopping
            return _crashed(result, "starting the run", exc, started, bench, experiment)
        return _attempt(scheduled, experiment, bench, settings, path, result, started, ahead)


def _attempt(scheduled: Scheduled, experiment: Experiment, bench: Bench, settings: Settings, path: Path,
             result: TaskResult, started: float, ahead: DagTest | None) -> TaskResult:
    task = scheduled.task
    try:
        if experiment.manual:
            spec = _expert_pipeline(task, path, scheduled.user, experiment, settings, bench.embedder)
            result.intent_ok = True
        else:
            planned = plan(path, task.goal, user=scheduled.user, mode=experiment.mode, settings=settings,
                           embedder=bench.embedder)
            spec = planned.pipeline
            result.intent_ok = (planned.intent.task_type == task.task_type
                                and (planned.intent.target or "").lower() == (task.target or "").lower())
    except PLANNING_ERRORS as exc:
        result.seconds = result.plan_seconds = round(time.perf_counter() - started, 3)
        result.failure = f"planning: {exc}"
        return result
    except Exception as exc:  # noqa: BLE001
        return _crashed(result, "planning", exc, started, bench, experiment)
    result.plan_seconds = round(time.perf_counter() - started, 3)
    steps = [(step.stage.value, step.microservice) for step in spec.steps]
    result.chosen = dict(steps)
    result.selection = {stage.value: result.chosen.get(stage.value) in names for stage, names in task.reference.items()}
    if not spec.valid:
        result.seconds = result.plan_seconds
        result.failure = "the pipeline did not validate: " + "; ".join(c.detail for c in spec.checks if not c.passed)
        return result
    result.cold = _cold(settings, steps)
    variables: dict[str, str] = {}
    fault, target = fault_for(scheduled.index) if experiment.inject_faults else None, None
    if fault and (target := main_step([(step.stage, step.microservice) for step in spec.steps])):
        single_model(settings, spec.id)
        scratch = bench.out / "faults" / experiment.slug / task.id
        shutil.rmtree(scratch, ignore_errors=True)  # the tries an interrupted attempt counted
        variables = faults.variables(target[1], fault, scratch)
        result.fault = fault.value
    try:
        summary, trace = _run_dag(spec.id, path, scheduled, experiment, bench, settings, variables, ahead)
    except Exception as exc:  # noqa: BLE001
        return _crashed(result, "running the pipeline", exc, started, bench, experiment)
    result.seconds = round(time.perf_counter() - started, 3)
    attempts = [a for step in trace["steps"] for a in step["attempts"]]
    result.substitutions = sum(1 for a in attempts if Decision.action_of(a["decision"]) is TryAction.SUBSTITUTE)
    if result.fault:
        main = next(s for s in trace["steps"] if s["stage"] == target[0].value)
        result.fault_provoked = bool(main["attempts"]) and main["attempts"][0]["status"] == StepStatus.FAILED
    if not summary.completed:
        result.failure = execution_failure(trace, summary.error)
        return result
    quality = assess(Path(summary.workspace), task.task_type, *task.frame_and_labels())
    result.quality = quality.metrics
    result.success = quality.valid
    result.failure = None if quality.valid else f"invalid output: {quality.problem}"
    return result


def _run_dag(pipeline_id: int, path: Path, scheduled: Scheduled, experiment: Experiment, bench: Bench,
             settings: Settings, variables: dict[str, str], ahead: DagTest | None) -> tuple[RunSummary, dict]:
    """Run the pipeline's Airflow DAG as ``dagsmith run`` does in-process (in ``ahead`` when a child was started
    before planning, else in one started now with ``variables``); its summary (from ``finish``'s XCom) and the
    execution's trace."""
    write_spec(pipeline_id, settings, retry_delay_seconds=bench.retry_delay_seconds)
    conf = {"dataset": str(path), "runtime": bench.runtime, "user": scheduled.user,
            "self_healing": experiment.self_healing}
    with contextlib.ExitStack() as stack:
        process = ahead or stack.enter_context(_dag_test_child(bench, experiment, scheduled.task, settings, variables))
        process.begin(pipeline_id, conf)
        process.wait()
    ended = process.result()
    if ended is None or ended.summary is None:
        raise RuntimeError(f"the Airflow run ended before the pipeline finished; its log is "
                           f"{_log_file(bench, experiment, scheduled.task)}")
    with session_scope(settings) as session:
        trace = stored(session, schema.Execution, ended.summary.execution_id).trace
    return ended.summary, trace


def _log_file(bench: Bench, experiment: Experiment, task: BenchTask) -> Path:
    return bench.out / "logs" / experiment.slug / f"{task.id}.log"


@contextlib.contextmanager
def _dag_test_child(bench: Bench, experiment: Experiment, task: BenchTask, settings: Settings,
                    variables: dict[str, str] | None = None) -> Iterator[DagTest]:
    """A ``dag.test()`` child logging to the task's log, stopped on the way out if it is still running (never given
    a pipeline because planning failed, or interrupted)."""
    log = _log_file(bench, experiment, task)
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w", encoding="utf-8") as output:
        process = spawn_dag_test(settings, output, variables)
        try:
            yield process
        finally:
            if process.poll() is None:
                process.stop()
            process.wait()


def execution_failure(trace: dict, error: str | None) -> str:
    """Why a run did not complete: its first step that did not, with that step's last error; else the run's own error
    (every step ran, but the model is no better than the trivial predictor)."""
    failed = next((s for s in trace["steps"] if s["status"] != StepStatus.COMPLETED), None)
    if failed is None:
        return f"execution: {error}"
    last = failed["attempts"][-1] if failed["attempts"] else {}
    why = f": {last['error_class']}: {last['error']}" if last.get("error") else ""
    return f"execution: step {failed['position']} ({failed['stage']}) did not complete{why}"


def _crashed(result: TaskResult, doing: str, exc: Exception, started: float, bench: Bench,
             experiment: Experiment) -> TaskResult:
    """``result`` failed by a crash while ``doing`` it, its traceback kept under ``<out>/crashes``."""
    result.failure = f"crash while {doing}: {type(exc).__name__}: {exc}"
    result.seconds = round(time.perf_counter() - started, 3)
    log = bench.out / "crashes" / f"{experiment.slug}--{result.task}.txt"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(traceback.format_exc(), encoding="utf-8")
    return result


def run_experiment(experiment: Experiment, scheduled: Iterable[Scheduled], bench: Bench, *, workers: int = 1,
                   on_result: Callable[[TaskResult], None] | None = None) -> list[TaskResult]:
    """Attempt every scheduled task not already in the experiment's results; returns all its results."""
    store = bench.results(experiment)
    done = store.load()
    pending = [s for s in scheduled if s.task.id not in done]
    if not pending:
        return list(done.values())
    settings = bench.prepare(experiment)

    def record(result: TaskResult) -> TaskResult:
        store.append(result)
        if on_result:
            on_result(result)
        return result

    if workers <= 1:
        fresh = [record(attempt(item, experiment, bench, settings)) for item in pending]
        return [*done.values(), *fresh]
    # Worker processes, not threads: a step forks its microservice process, which is unsafe while another
    # thread of the same process is inside BLAS or holds the allocator's locks.
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                             initializer=_start_worker, initargs=(dataclasses.replace(bench, embedder=None), workers)
                             ) as pool:
        futures = [pool.submit(_attempt_in_worker, item, experiment, settings) for item in pending]
        fresh = [record(future.result()) for future in as_completed(futures)]
    return [*done.values(), *fresh]


_WORKER_BENCH: Bench | None = None


def _start_worker(bench: Bench, workers: int) -> None:
    global _WORKER_BENCH
    # the runs share the machine's CPUs: each fits as many of its search's candidates at once as its share holds
    os.environ.setdefault(CANDIDATES_AT_ONCE_VARIABLE, str(max(1, usable_cpus() // workers)))
    _WORKER_BENCH = dataclasses.replace(bench, embedder=default_embedder())


def _attempt_in_worker(item: Scheduled, experiment: Experiment, settings: Settings) -> TaskResult:
    return attempt(item, experiment, _WORKER_BENCH, settings)


def run_peers(peer: Peer, results: list[TaskResult], tasks: dict[str, BenchTask], bench: Bench,
              on_result: Callable[[PeerResult], None] | None = None) -> list[PeerResult]:
    """``peer`` on every supervised task the ``full`` experiment attempted, with that attempt's time as budget.

    Raises PeerUnavailable (before any task) when the peer cannot run here."""
    store = bench.peers(peer.name)
    done = store.load()
    pending = [(tasks[r.task], r.seconds) for r in results
               if r.task in tasks and tasks[r.task].target is not None and r.task not in done]
    if pending:
        peer.prepare()
    fresh = []
    for task, seconds in pending:
        result = run_peer(peer, task, seconds)
        store.append(result)
        fresh.append(result)
        if on_result:
            on_result(result)
    return [*done.values(), *fresh]
