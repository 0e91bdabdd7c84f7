"""What the store knows about built pipelines and their runs, in the shape the CLI and the UI show it.

One place reads it so ``dagsmith pipelines``, ``dagsmith run`` and the UI plugin agree on what a run's
results, substitutions and artifacts are.
"""

from __future__ import annotations

import hashlib

from json import loads as load_json
from pathlib import Path
from typing import Any

from sqlalchemy import ColumnElement, func, select, true
from sqlalchemy.orm import Session

from dagsmith.models.execution import FORECAST_FILE, Decision, RunSummary, TryAction
from dagsmith.store import schema
from dagsmith.store.pipelines import service_names, steps_of


def substitutions(trace: dict, names: dict[int | None, str]) -> list[dict[str, Any]]:
    """The swaps self-healing made in one run: step, the service that failed, the one that took over, why."""
    decided = ((s, Decision.of(a.get("decision"))) for s in trace.get("steps", []) for a in s["attempts"])
    return [{"position": s["position"], "stage": s["stage"], "from": names.get(d.replaced), "to": d.to_name,
             "reason": d.reason} for s, d in decided if d and d.action is TryAction.SUBSTITUTE]


def pipeline_rows(session: Session, visible: ColumnElement[bool] | None = None) -> list[dict[str, Any]]:
    """Every pipeline (or those ``visible`` selects) with its number of runs and its latest run."""
    runs = (select(schema.Execution.pipeline_id, func.count().label("runs"),
                   func.max(schema.Execution.id).label("last"))
            .group_by(schema.Execution.pipeline_id).subquery())
    query = (select(schema.Pipeline, func.coalesce(runs.c.runs, 0), schema.Execution)
             .outerjoin(runs, runs.c.pipeline_id == schema.Pipeline.id)
             .outerjoin(schema.Execution, schema.Execution.id == runs.c.last)
             .where(visible if visible is not None else true())
             .order_by(schema.Pipeline.id))
    names = service_names(session)
    return [{"id": p.id, "name": p.name, "status": p.status, "owner": p.owner, "shared": p.shared,
             "goal": p.goal, "task_type": p.task_type, "target": p.target, "runs": n, "created_at": p.created_at,
             "last_run": None if last is None else {
                 "execution_id": last.id, "status": last.status, "started_at": last.started_at,
                 "seconds": last.seconds, "substitutions": substitutions(last.trace, names)}}
            for p, n, last in session.execute(query)]


def run_tries(session: Session, execution_ids: list[int], names: dict[int | None, str]) -> dict[int, list[dict]]:
    """Every try of these runs by run, in step order and then as they started: what ran, how it ended, the worker
    that ran it and the most memory it held (MB, where measured)."""
    tries: dict[int, list[dict]] = {execution_id: [] for execution_id in execution_ids}
    rows = session.execute(select(schema.StepAttempt, schema.PipelineStep.position, schema.PipelineStep.stage)
                           .join(schema.PipelineStep, schema.PipelineStep.id == schema.StepAttempt.step_id)
                           .where(schema.StepAttempt.execution_id.in_(execution_ids))
                           .order_by(schema.PipelineStep.position, schema.StepAttempt.started_at))
    for attempt, position, stage in rows:
        tries[attempt.execution_id].append({
            "position": position, "stage": stage, "attempt": attempt.attempt,
            "microservice": names.get(attempt.microservice_id), "status": attempt.status,
            "error_class": attempt.error_class, "worker": attempt.worker, "peak_mb": attempt.peak_mb,
            "started_at": attempt.started_at, "finished_at": attempt.finished_at})
    return tries


def pipeline_detail(session: Session, pipeline: schema.Pipeline) -> dict[str, Any]:
    """A pipeline's steps (with their ranked alternatives) and every run with its substitutions and tries."""
    names = service_names(session)
    steps = steps_of(session, pipeline.id)
    executions = session.scalars(select(schema.Execution).where(schema.Execution.pipeline_id == pipeline.id)
                                 .order_by(schema.Execution.id)).all()
    tries = run_tries(session, [e.id for e in executions], names)
    return {
        "id": pipeline.id, "name": pipeline.name, "goal": pipeline.goal, "owner": pipeline.owner,
        "shared": pipeline.shared, "status": pipeline.status, "task_type": pipeline.task_type,
        "target": pipeline.target, "dataset": pipeline.dataset, "schedule": pipeline.schedule,
        "steps": [{"position": s.position, "stage": s.stage, "microservice": names.get(s.microservice_id),
                   "params": s.params, "depends_on": s.depends_on, "status": s.status,
                   "alternatives": [a["name"] for a in s.alternatives]} for s in steps],
        "runs": [{"execution_id": e.id, "status": e.status, "dataset": e.dataset, "seconds": e.seconds,
                  "started_at": e.started_at, "workspace": e.workspace, "error": e.error,
                  "airflow_run_id": e.airflow_run_id, "substitutions": [s["to"] for s in substitutions(e.trace, names)],
                  "tries": tries[e.id]}
                 for e in executions],
    }


def artifact_paths(workspace: Path) -> list[Path]:
    """The plots a run's steps wrote, in step order; one a step passes on unchanged is listed where it was made."""
    seen: set[tuple[str, bytes]] = set()
    plots = []
    for path in sorted(workspace.glob("steps/*/artifacts/*.png")):
        key = (path.name, hashlib.blake2b(path.read_bytes(), digest_size=16).digest())
        if key not in seen:
            seen.add(key)
            plots.append(path)
    return plots


def execution_summary(session: Session, execution: schema.Execution) -> RunSummary:
    """One run's outcome: status, the answer to the goal, metrics of every step, held-out quality beside a trivial
    predictor's, the model search, plots, report, substitutions and error."""
    workspace = Path(execution.workspace or "")
    metrics: dict[str, Any] = {}
    for folder in sorted(workspace.joinpath("steps").glob("*")):
        file = folder / "metrics.json"
        if file.is_file():
            metrics.update(load_json(file.read_text()))
    reports = sorted(workspace.glob("steps/*/report.md"))
    answer = workspace / "answer.md"
    forecast = workspace / FORECAST_FILE
    return RunSummary(
        pipeline_id=execution.pipeline_id, execution_id=execution.id, status=execution.status, owner=execution.owner,
        dataset=execution.dataset, started_at=execution.started_at, seconds=execution.seconds,
        workspace=str(workspace), metrics=metrics, artifacts=[str(p) for p in artifact_paths(workspace)],
        report=str(answer) if answer.is_file() else str(reports[-1]) if reports else None,
        answer=execution.trace.get("answer"), substitutions=substitutions(execution.trace, service_names(session)),
        error=execution.error, isolation=execution.trace.get("isolation", []), quality=execution.trace.get("quality"),
        search=execution.trace.get("search", {}), review=(execution.trace.get("quality") or {}).get("review"),
        forecast=str(forecast) if forecast.is_file() else None)

