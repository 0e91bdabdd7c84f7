"""``dagsmith run``: plan a pipeline, then run it as its own Airflow DAG, showing progress per stage."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.markup import escape

from dagsmith.airflow.local import DagTest
from dagsmith.airflow.watch import STOP_SECONDS, STOPPED_REASON
from dagsmith.cli.ahead import RunChild, child_for
from dagsmith.cli.output import console, fail, print_json, progress
from dagsmith.cli.plan import (
    Choose,
    Columns,
    Data,
    EachTarget,
    Exclude,
    Goal,
    HorizonSpan,
    Interactive,
    Metric,
    Target,
    Task,
    TimeBudget,
    plan_or_fail,
    read_choices,
    read_columns,
)
from dagsmith.cli.report import exit_code, progress_lines, show
from dagsmith.cli.submit import PASSWORD_VARIABLE, URL_VARIABLE, USER_VARIABLE, find_deployment, submit
from dagsmith.config import Settings
from dagsmith.execution.history import execution_summary
from dagsmith.execution.specs import write_spec
from dagsmith.models.intent import ConstraintKind, GivenFields
from dagsmith.runtime import check_runtime, runtime_named
from dagsmith.runtime.base import RuntimeUnavailable
from dagsmith.store import schema
from dagsmith.store.db import get_engine, session_scope, stored
from dagsmith.store.events import RunEvent, run_events

#: How long to wait for a run event before checking that the run's process is still going.
WAIT_SECONDS = 1.0


def require_runtime(runtime: str) -> None:
    """A --runtime option that names no runtime is a usage error (exit 2), not a traceback."""
    try:
        check_runtime(runtime)
    except ValueError as exc:
        fail(f"--runtime: {exc}", code=2)


def require_reachable(runtime: str) -> None:
    """A runtime that cannot run services here (no container engine or runtime image, no bubblewrap) stops a run
    before it starts (exit 3), saying how to fix it, instead of failing each step's tries one by one."""
    require_runtime(runtime)
    try:
        runtime_named(runtime, Settings.from_env()).check()
    except RuntimeUnavailable as exc:
        fail(f"cannot run on the {runtime} runtime: {exc}", code=exc.exit_code)


def run_command(
    data: Data,
    goal: Goal = None,
    target: Target = None,
    task: Task = None,
    metric: Metric = None,
    exclude: Exclude = [],  # noqa: B006
    time_budget: TimeBudget = None,
    horizon: HorizonSpan = None,
    columns: Columns = None,
    runtime: Annotated[str | None, typer.Option(help="Where steps run: local (subprocesses) or docker (containers); "
                                                     "default local, or the deployment's default there.")] = None,
    user: Annotated[str | None, typer.Option(help="Who runs it; their history weighs in and learns from the run. "
                                                  "Default: anonymous, or the login on a deployment (where only "
                                                  "an admin login may name another).")] = None,
    interactive: Interactive = False,
    choose: Choose = [],  # noqa: B006
    each_target: EachTarget = False,
    json: Annotated[bool, typer.Option("--json", help="Print the run's summary as JSON (a list when several "
                                                      "pipelines ran).")] = False,
    airflow_url: Annotated[str | None, typer.Option(
        "--airflow-url", envvar=URL_VARIABLE, show_envvar=False,
        help=f"Submit to the Airflow deployment at this address (env {URL_VARIABLE}; login from {USER_VARIABLE} and "
             f"{PASSWORD_VARIABLE}). Default: the one `dagsmith serve` runs for this DAGSMITH_HOME, if any.")] = None,
    in_process: Annotated[bool, typer.Option("--in-process", help="Run here with an embedded Airflow even when a "
                                                                  "deployment is running.")] = False,
) -> None:
    """Plan a pipeline (profile, intent, recommend, build), then run it through Airflow with self-healing; with several
    targets, one pipeline per target, run one after another. On a running deployment (`dagsmith serve`,
    --airflow-url) both happen there, followed from here; else in this process."""
    if runtime:
        require_runtime(runtime)
    ask = read_choices(choose, interactive)
    given = GivenFields(target=target, task=task, metric=metric, exclude=exclude, time_budget=time_budget,
                        horizon=horizon)
    descriptions = read_columns(columns)
    goal = given.goal_for(goal)  # the goal the pipeline is stored with, whichever process plans it
    settings = Settings.from_env()
    if in_process and airflow_url:
        fail("--in-process runs here, --airflow-url (or DAGSMITH_AIRFLOW_URL) on a deployment: pass one", code=2)
    deployment = None if in_process else find_deployment(settings, airflow_url)
    if deployment and interactive:
        fail(f"--interactive asks at this terminal, and the run would go to the deployment at {deployment.url}: choose "
             "there (trigger dagsmith_build_pipeline with interactive on), pass --choose STAGE=MICROSERVICE, or add "
             "--in-process", code=2)
    if deployment:
        # the login owns what it builds: under FAB only a login's own role can be granted a pipeline's DAG
        reports = submit(deployment, data, goal, runtime=runtime, user=user or deployment.user, choose=choose,
                         each_target=each_target, given=given, descriptions=descriptions, settings=settings,
                         json=json)
    else:
        reports = _run_here(data, goal, runtime=runtime or "local", user=user or "anonymous", settings=settings,
                            choose=choose, ask=ask, each_target=each_target, given=given,
                            descriptions=descriptions, json=json)
    if json:
        print_json(reports if len(reports) > 1 else reports[0])
    raise typer.Exit(exit_code(reports))


def _run_here(data: Path, goal: str, *, runtime: str, user: str, settings: Settings, json: bool,
              **planning) -> list[dict]:
    """Plan in this process, then run each pipeline with ``dag.test()``; their summaries."""
    require_reachable(runtime)
    started: float | None = time.monotonic()
    with closing(child_for(settings, runtime)) as ahead:  # Airflow gets ready in it while the agents plan here
        results = plan_or_fail(data, goal, user=user, settings=settings, json=json, **planning)
        for result in results:
            spec = result.pipeline
            if not spec.valid:
                fail(f"the planned pipeline {spec.id} did not pass its checks: "
                     + "; ".join(c.detail for c in spec.checks if not c.passed))
        reports: list[dict] = []
        for result in results:
            spec = result.pipeline
            if not json:
                gap, target = "\n" if reports else "", f" of '{result.intent.target}'" if result.intent.target else ""
                console.print(f"{gap}pipeline {spec.id} [bold]{escape(spec.name)}[/]: "
                              f"{result.intent.task_type.value}{target}, {len(spec.steps)} steps, runtime {runtime}",
                              highlight=False)
                if left_out := result.intent.reasons.get(f"constraint.{ConstraintKind.EXCLUDE_COLUMNS}"):
                    console.print(f"  {escape(left_out)}", highlight=False)  # what the answer will not have used
            reports.append(run_and_report(spec.id, Path(data).resolve(), runtime=runtime, user=user,
                                          settings=settings, json=json, started=started,
                                          child=None if reports else ahead))
            started = None  # the first run's time to results counts its planning; the next ones' their own run
    return reports


def execute_pipeline(pipeline_id: int, dataset: Path, *, runtime: str, user: str, settings: Settings,
                     json: bool) -> None:
    """Run a stored pipeline as its Airflow DAG, printing its progress and results (or its summary as JSON)."""
    report = run_and_report(pipeline_id, dataset, runtime=runtime, user=user, settings=settings, json=json)
    if json:
        print_json(report)
    raise typer.Exit(exit_code([report]))


def run_and_report(pipeline_id: int, dataset: Path, *, runtime: str, user: str, settings: Settings, json: bool,
                   started: float | None = None, child: RunChild | None = None) -> dict:
    """Run a stored pipeline as its Airflow DAG (``dag.test()``; in ``child`` when one was started ahead), printing
    progress per stage, then results (unless ``json``); its summary as JSON, with the Airflow log and the time to
    results."""
    from dagsmith.execution import run as execution  # the executor's data stack, loaded only to run

    require_reachable(runtime)
    started = started or time.monotonic()
    write_spec(pipeline_id, settings)
    shown = _Progress(settings, json)
    with closing(child or RunChild(settings, runtime)) as child, run_events(get_engine(settings)) as events:
        child.begin(pipeline_id, {"dataset": str(dataset), "runtime": runtime, "user": user})
        process, log_file = child.process, child.log_file
        try:
            with _interrupts() as asked, _exit_of(process.pid) as ended:
                while process.poll() is None and not asked.is_set():
                    shown.hear(events.wait(WAIT_SECONDS, until=ended), process.pid)
                if asked.is_set():  # its KeyboardInterrupt was raised where Python swallows it (a finaliser)
                    raise KeyboardInterrupt
        except KeyboardInterrupt:
            _stop(process, pipeline_id, shown.execution_id, log_file, settings)
    shown.show()
    ended = process.result()
    summary = ended.summary if ended else None
    if summary is None:  # the run ended before its finish task closed it: it is not left running
        if shown.execution_id is None:
            fail(f"the run of pipeline {pipeline_id} ended before it started; its log is {log_file}")
        execution.abandon(shown.execution_id, "the Airflow run ended before the pipeline finished; its log is "
                          f"{log_file}", settings=settings)
        with session_scope(settings) as session:
            summary = execution_summary(session, stored(session, schema.Execution, shown.execution_id))
    seconds = round(time.monotonic() - started, 2)
    if not json:
        show(summary, seconds, log_file)
    return {**summary.model_dump(mode="json"), "airflow_log": str(log_file), "time_to_results_seconds": seconds,
            "airflow_state": ended.state if ended else "did not finish"}


class _Progress:
    """What a local run has shown so far: it learns the run's execution from the ``started`` event its child
    announces, and reads the store only when an event says the execution changed."""

    def __init__(self, settings: Settings, json: bool) -> None:
        self.settings, self.json = settings, json
        self.execution_id: int | None = None
        self._seen: set = set()

    def hear(self, events: list[RunEvent], child: int) -> None:
        for event in events:
            if self.execution_id is None and event.kind == "started" and event.pid == child:
                self.execution_id = event.execution_id
        if any(event.execution_id == self.execution_id for event in events):
            self.show()

    def show(self) -> None:
        """Print the run's step events not shown yet (none with ``--json``)."""
        if self.json or self.execution_id is None:
            return
        for line in progress_lines(self.settings, self.execution_id, self._seen):
            console.print(line, highlight=False)


@contextmanager
def _exit_of(pid: int) -> Iterator[int]:
    """A descriptor that becomes readable when the child ``pid`` exits (Linux's pidfd), so that the results show as
    soon as the run ends rather than at the next wait's timeout."""
    descriptor = os.pidfd_open(pid)
    try:
        yield descriptor
    finally:
        os.close(descriptor)


@contextmanager
def _interrupts() -> Iterator[threading.Event]:
    """Ctrl-C and SIGTERM stop the run (``_stop``) instead of ending this process with the run left going. Each
    raises KeyboardInterrupt, which ends a wait at once, and is remembered as well: Python drops an exception raised
    while a finaliser runs (a database connection being collected), and the run would then go on to its end."""
    asked = threading.Event()

    def interrupt(number: int, frame: object) -> None:
        asked.set()
        raise KeyboardInterrupt

    previous = {number: signal.signal(number, interrupt) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield asked
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _stop(process: DagTest, pipeline_id: int, execution_id: int | None, log_file: Path,
          settings: Settings) -> NoReturn:
    """Stop the run on Ctrl-C or SIGTERM: it records itself interrupted and cleans up (``airflow.watch``); it is
    killed if it has not ended in time. Exits 130, as a shell reports an interrupted command."""
    from dagsmith.execution import run as execution

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C would leave the run half-stopped
    progress(f"stopping the run of pipeline {pipeline_id} ...")
    process.stop()
    try:
        process.wait(timeout=STOP_SECONDS + 10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if execution_id is not None:
        execution.abandon(execution_id, STOPPED_REASON, settings=settings)  # when the run could not record it
    fail(f"interrupted: the run of pipeline {pipeline_id} was stopped and is recorded as interrupted; its log is "
         f"{log_file}", code=130)
