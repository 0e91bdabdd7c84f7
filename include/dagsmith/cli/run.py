"""``dagsmith run``: plan a pipeline, then run it as its own Airflow DAG, showing progress per stage."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from sqlalchemy import select

from dagsmith.airflow.local import dag_test_result, start_dag_test
from dagsmith.cli.output import console, fail, print_json, progress
from dagsmith.cli.plan import Choose, EachTarget, Interactive, plan_or_fail, read_choices
from dagsmith.config import Settings
from dagsmith.execution.history import execution_summary
from dagsmith.execution.quality import Quality
from dagsmith.execution.specs import write_spec
from dagsmith.models.execution import Decision, RunSummary, StepStatus, TryAction
from dagsmith.models.plan import PipelineStatus
from dagsmith.runtime import check_runtime, runtime_named
from dagsmith.runtime.base import RuntimeUnavailable
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from dagsmith.store.pipelines import service_names

POLL_SECONDS = 0.5


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


def _progress_lines(settings: Settings, execution_id: int, seen: set) -> list[str]:
    """New step events of the run since the last poll: completions, failures and healing decisions."""
    lines = []
    with session_scope(settings) as session:
        names = service_names(session)
        rows = session.execute(select(schema.StepAttempt, schema.PipelineStep)
                               .join(schema.PipelineStep, schema.PipelineStep.id == schema.StepAttempt.step_id)
                               .where(schema.StepAttempt.execution_id == execution_id)
                               .order_by(schema.StepAttempt.id)).all()
        for attempt, step in rows:
            action = Decision.action_of(attempt.decision)
            key = (attempt.id, attempt.status, action)
            if key in seen or attempt.status == StepStatus.RUNNING:
                continue
            seen.add(key)
            label = f"{step.position:>2} {step.stage:<24} {names[attempt.microservice_id]}"
            searching = action in (TryAction.CANDIDATE, TryAction.SELECTED, TryAction.OUTPERFORMED)
            if searching and attempt.status != StepStatus.FAILED:
                lines.append(_search_line(label, attempt.status, action, attempt.decision.get("reason", "")))
            elif attempt.status == StepStatus.COMPLETED:
                lines.append(f"[green]✓[/] {label}")
            else:
                lines.append(f"[red]✗[/] {label}: {escape(attempt.error_class or '')}")
                if attempt.decision:
                    lines.append(f"  [yellow]↻[/] {escape(attempt.decision.get('reason', ''))}")
    return lines


def _search_line(label: str, status: str, action: str, reason: str) -> str:
    """A model search's candidate as it finishes, then as chosen or outperformed."""
    if action == TryAction.CANDIDATE:
        return f"[green]✓[/] {label} [dim](candidate)[/]"
    if action == TryAction.SELECTED:
        return f"[green]✓[/] {label} [bold](chosen)[/]\n  [green]★[/] {escape(reason)}"
    return f"[dim]–  {label}: outperformed[/]"


def run_command(
    data: Annotated[Path, typer.Argument(help="The dataset: CSV, TSV, Parquet, JSON or Excel.")],
    goal: Annotated[str, typer.Argument(help='What you want, in plain language, e.g. "predict customer churn".')],
    runtime: Annotated[str, typer.Option(help="Where steps run: local (subprocesses) or docker (containers).")] = "local",
    user: Annotated[str, typer.Option(help="Who runs it; their history weighs in and learns from the run.")] = "anonymous",
    interactive: Interactive = False,
    choose: Choose = [],  # noqa: B006
    each_target: EachTarget = False,
    json: Annotated[bool, typer.Option("--json", help="Print the run's summary as JSON (a list when several "
                                                      "pipelines ran).")] = False,
) -> None:
    """Plan a pipeline (profile, intent, recommend, build), then run it through Airflow with self-healing; with several
    targets, one pipeline per target, run one after another."""
    require_reachable(runtime)
    choices, ask = read_choices(choose, interactive)
    settings = Settings.from_env()
    started = time.monotonic()
    results = plan_or_fail(data, goal, user=user, settings=settings, choices=choices, ask=ask, each_target=each_target)
    for result in results:
        spec = result.pipeline
        if not spec.valid:
            fail(f"the planned pipeline {spec.id} did not pass its checks: "
                 + "; ".join(c.detail for c in spec.checks if not c.passed))
    reports = []
    for result in results:
        spec = result.pipeline
        if not json:
            gap, target = "\n" if reports else "", f" of '{result.intent.target}'" if result.intent.target else ""
            console.print(f"{gap}pipeline {spec.id} [bold]{escape(spec.name)}[/]: {result.intent.task_type.value}"
                          f"{target}, {len(spec.steps)} steps, runtime {runtime}", highlight=False)
        reports.append(run_and_report(spec.id, Path(data).resolve(), runtime=runtime, user=user, settings=settings,
                                      json=json, started=started))
        started = None  # the first run's time to results counts its planning; the next ones' their own run
    if json:
        print_json(reports if len(reports) > 1 else reports[0])
    if not all(report["status"] == PipelineStatus.COMPLETED for report in reports):
        raise typer.Exit(1)


def execute_pipeline(pipeline_id: int, dataset: Path, *, runtime: str, user: str, settings: Settings,
                     json: bool) -> None:
    """Run a stored pipeline as its Airflow DAG, printing its progress and results (or its summary as JSON)."""
    report = run_and_report(pipeline_id, dataset, runtime=runtime, user=user, settings=settings, json=json)
    if json:
        print_json(report)
    if report["status"] != PipelineStatus.COMPLETED:
        raise typer.Exit(1)


def run_and_report(pipeline_id: int, dataset: Path, *, runtime: str, user: str, settings: Settings, json: bool,
                   started: float | None = None) -> dict:
    """Run a stored pipeline as its Airflow DAG (``dag.test()``), printing progress per stage, then results (unless
    ``json``); its summary as JSON, with the Airflow log and the time to results."""
    from dagsmith.execution import run as execution  # the executor's data stack, loaded only to run

    require_reachable(runtime)
    started = started or time.monotonic()
    write_spec(pipeline_id, settings)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
    log_file = settings.home / "logs" / f"pipeline-{pipeline_id}-{stamp}-{os.getpid()}.log"  # one per run, always
    log_file.parent.mkdir(parents=True, exist_ok=True)
    execution_id = execution.start(pipeline_id, str(dataset), user=user, run_id=None, settings=settings)
    seen: set = set()
    with open(log_file, "w", encoding="utf-8") as output:
        process = start_dag_test(pipeline_id, {"dataset": str(dataset), "runtime": runtime, "user": user},
                                 settings, output, execution_id=execution_id)
        while process.poll() is None:
            time.sleep(POLL_SECONDS)
            for line in ([] if json else _progress_lines(settings, execution_id, seen)):
                console.print(line, highlight=False)
    for line in ([] if json else _progress_lines(settings, execution_id, seen)):
        console.print(line, highlight=False)
    outcome = dag_test_result(log_file)
    execution.abandon(execution_id, f"the Airflow run ended before the pipeline finished; its log is {log_file}",
                      settings=settings)  # a run Airflow left unfinished is not left running
    with session_scope(settings) as session:
        summary = execution_summary(session, session.get(schema.Execution, execution_id))
    seconds = round(time.monotonic() - started, 2)
    if not json:
        _show(summary, seconds, log_file)
    return {**summary.model_dump(mode="json"), "airflow_log": str(log_file), "time_to_results_seconds": seconds,
            "airflow_state": outcome["state"] if outcome else "did not finish"}


def _show(summary: RunSummary, seconds: float, airflow_log: Path) -> None:
    style = "green" if summary.completed else "red"
    console.print(f"\n[{style}]{summary.status.value}[/] in {seconds} s (execution {summary.execution_id})",
                  highlight=False)
    if summary.answer and summary.completed:
        console.print(f"\n{escape(summary.answer)}\n", highlight=False)
    quality = summary.quality
    for row in Quality(**quality).beside_baselines() if quality else []:
        console.print(f"  {row['metric']:<28} {row['value']:.4f}   trivial predictor {row['baseline']:.4f}",
                      highlight=False)
    for key, value in summary.metrics.items():
        if isinstance(value, float) and not (quality and key in quality["metrics"]):
            console.print(f"  {key:<28} {value:.4f}", highlight=False)
    for item in summary.substitutions:
        console.print(f"  [yellow]substituted[/] {item['stage']}: {item['from']} -> {item['to']}", highlight=False)
    for artifact in summary.artifacts:
        console.print(f"  [dim]plot[/] {artifact}", highlight=False)
    if summary.report:
        console.print(f"  [dim]report[/] {summary.report}", highlight=False)
    if summary.error:
        console.print(f"  [red]{escape(summary.error)}[/] (Airflow log: {airflow_log})", highlight=False)
    for isolation in summary.isolation:
        if isolation.startswith("NO SANDBOX"):
            console.print(f"  [bold red]services ran with {escape(isolation)}[/]", highlight=False)
    progress(f"workspace {summary.workspace}")
