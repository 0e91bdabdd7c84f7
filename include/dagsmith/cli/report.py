"""What ``dagsmith run`` prints about a run, in-process or on a deployment: each step as it ends, then the results."""

from __future__ import annotations

from pathlib import Path

from rich.markup import escape
from sqlalchemy import select

from dagsmith.cli.output import console, progress
from dagsmith.config import Settings
from dagsmith.models.execution import Decision, RunSummary, StepStatus, TryAction
from dagsmith.models.plan import PipelineStatus
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from dagsmith.store.pipelines import service_names

#: The exit code of runs that completed with a result too good to trust (a likely leak or a wrong target).
NEEDS_REVIEW = 4


def progress_lines(settings: Settings, execution_id: int, seen: set) -> list[str]:
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
                reason = attempt.decision.get("reason", "")
                said = ("reason", step.id, reason)  # a blend's members share the search's one reason: said once
                lines.append(_search_line(label, action, "" if said in seen else reason))
                seen.add(said)
            elif attempt.status == StepStatus.COMPLETED:
                lines.append(f"[green]✓[/] {label}")
            else:
                lines.append(f"[red]✗[/] {label}: {escape(attempt.error_class or '')}")
                if attempt.decision:
                    lines.append(f"  [yellow]↻[/] {escape(attempt.decision.get('reason', ''))}")
    return lines


def _search_line(label: str, action: str, reason: str) -> str:
    """A model search's candidate as it finishes, then as chosen (with why, unless said already) or outperformed."""
    if action == TryAction.CANDIDATE:
        return f"[green]✓[/] {label} [dim](candidate)[/]"
    if action == TryAction.SELECTED:
        return f"[green]✓[/] {label} [bold](chosen)[/]" + (f"\n  [green]★[/] {escape(reason)}" if reason else "")
    return f"[dim]–  {label}: outperformed[/]"


def exit_code(reports: list[dict]) -> int:
    """What ``dagsmith run`` exits with: 1 when a pipeline failed, ``NEEDS_REVIEW`` when one completed with a result
    too good to trust, else 0."""
    if not all(report["status"] == PipelineStatus.COMPLETED for report in reports):
        return 1
    return NEEDS_REVIEW if any(report.get("review") for report in reports) else 0


def show(summary: RunSummary, seconds: float, airflow_log: Path | str) -> None:
    # Imported here: it loads scikit-learn, which every command (and the generated CLI reference) would pay for.
    from dagsmith.execution.quality import Quality

    style, verdict = ("green" if summary.completed else "red"), summary.status.value
    if summary.completed and summary.review:
        style, verdict = "yellow", f"{verdict}, needs review"
    console.print(f"\n[{style}]{verdict}[/] in {seconds} s (execution {summary.execution_id})", highlight=False)
    if summary.answer and summary.completed:
        console.print(f"\n{escape(summary.answer)}\n", highlight=False)
    beside = Quality(**summary.quality).beside_baselines() if summary.quality else []
    for row in beside:
        console.print(f"  {row['metric']:<28} {row['value']:.4f}   trivial predictor {row['baseline']:.4f}",
                      highlight=False)
    shown = {row["metric"] for row in beside}
    for key, value in summary.metrics.items():
        if isinstance(value, float) and key not in shown:
            console.print(f"  {key:<28} {value:.4f}", highlight=False)
    for item in summary.substitutions:
        console.print(f"  [yellow]substituted[/] {item['stage']}: {item['from']} -> {item['to']}", highlight=False)
    for artifact in summary.artifacts:  # a path is never wrapped: it must stay one line to copy or to parse
        console.print(f"  [dim]plot[/] {artifact}", highlight=False, soft_wrap=True)
    if summary.report:
        console.print(f"  [dim]report[/] {summary.report}", highlight=False, soft_wrap=True)
    if summary.forecast:
        console.print(f"  [dim]forecast[/] {summary.forecast}", highlight=False, soft_wrap=True)
    if summary.error:
        console.print(f"  [red]{escape(summary.error)}[/] (Airflow log: {airflow_log})", highlight=False)
    for isolation in summary.isolation:
        if isolation.startswith("NO SANDBOX"):
            console.print(f"  [bold red]services ran with {escape(isolation)}[/]", highlight=False)
    progress(f"workspace {summary.workspace}")
