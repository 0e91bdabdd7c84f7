"""``dagsmith pipelines``: the pipelines dagsmith has built, their runs, and reruns on new data."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table
from sqlalchemy import func, select

from dagsmith.cli.output import console, fail, print_json
from dagsmith.cli.run import execute_pipeline
from dagsmith.config import Settings
from dagsmith.store import schema
from dagsmith.store.db import session_scope

app = typer.Typer(help="List, inspect and re-run built pipelines.", no_args_is_help=True)
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


@app.command("list")
def list_pipelines(
    owner: Annotated[str | None, typer.Option(help="Only this owner's pipelines.")] = None,
    json: JsonOption = False,
) -> None:
    """Every pipeline with its status, owner and number of runs."""
    with session_scope() as session:
        runs = (select(schema.Execution.pipeline_id, func.count().label("runs"))
                .group_by(schema.Execution.pipeline_id).subquery())
        query = (select(schema.Pipeline, func.coalesce(runs.c.runs, 0))
                 .outerjoin(runs, runs.c.pipeline_id == schema.Pipeline.id).order_by(schema.Pipeline.id))
        if owner:
            query = query.where(schema.Pipeline.owner == owner)
        rows = [{"id": p.id, "name": p.name, "status": p.status, "owner": p.owner, "task_type": p.task_type,
                 "target": p.target, "runs": n, "created_at": p.created_at} for p, n in session.execute(query)]
    if json:
        print_json(rows)
        return
    table = Table("id", "name", "status", "owner", "task", "target", "runs", box=None)
    for r in rows:
        table.add_row(str(r["id"]), r["name"], r["status"], r["owner"], r["task_type"] or "", r["target"] or "",
                      str(r["runs"]))
    console.print(table)


@app.command()
def show(
    pipeline_id: Annotated[int, typer.Argument(help="Pipeline id (see `dagsmith pipelines list`).")],
    json: JsonOption = False,
) -> None:
    """A pipeline's steps, and its runs with their outcome and the substitutions self-healing made."""
    with session_scope() as session:
        pipeline = session.get(schema.Pipeline, pipeline_id)
        if pipeline is None:
            fail(f"no pipeline {pipeline_id}; `dagsmith pipelines list` shows them", code=2)
        names = dict(session.execute(select(schema.Microservice.id, schema.Microservice.name)).all())
        steps = session.scalars(select(schema.PipelineStep).where(schema.PipelineStep.pipeline_id == pipeline_id)
                                .order_by(schema.PipelineStep.position)).all()
        executions = session.scalars(select(schema.Execution).where(schema.Execution.pipeline_id == pipeline_id)
                                     .order_by(schema.Execution.id)).all()
        detail = {
            "id": pipeline.id, "name": pipeline.name, "goal": pipeline.goal, "owner": pipeline.owner,
            "status": pipeline.status, "task_type": pipeline.task_type, "target": pipeline.target,
            "dataset": pipeline.dataset,
            "steps": [{"position": s.position, "stage": s.stage, "microservice": names.get(s.microservice_id),
                       "params": s.params, "depends_on": s.depends_on, "status": s.status,
                       "alternatives": [a["name"] for a in s.alternatives]} for s in steps],
            "runs": [{"execution_id": e.id, "status": e.status, "dataset": e.dataset, "seconds": e.seconds,
                      "started_at": e.started_at, "workspace": e.workspace, "error": e.error,
                      "substitutions": [a["decision"].get("to_name") for st in e.trace.get("steps", [])
                                        for a in st["attempts"] if a.get("decision", {}).get("action") == "substitute"]}
                     for e in executions],
        }
    if json:
        print_json(detail)
        return
    console.print(f"[bold]{detail['id']} {escape(detail['name'])}[/] ({detail['status']}, owner {detail['owner']}): "
                  f"{escape(detail['goal'])}", highlight=False)
    for s in detail["steps"]:
        params = ", ".join(f"{k}={v!r}" for k, v in s["params"].items())
        console.print(f"  {s['position']:>2} [cyan]{s['stage']:<24}[/] {s['microservice']} [dim]{escape(params)}[/]",
                      highlight=False)
    for run in detail["runs"]:
        seconds = f"{run['seconds']:.1f} s" if run["seconds"] else "-"
        swaps = f", substituted: {', '.join(run['substitutions'])}" if run["substitutions"] else ""
        console.print(f"  run {run['execution_id']}: {run['status']} in {seconds} on {escape(run['dataset'])}{swaps}",
                      highlight=False)


@app.command()
def rerun(
    pipeline_id: Annotated[int, typer.Argument(help="Pipeline id.")],
    data: Annotated[Path | None, typer.Option("--data", help="A new dataset with the same columns.")] = None,
    runtime: Annotated[str, typer.Option(help="local or docker.")] = "local",
    user: Annotated[str | None, typer.Option(help="Who runs it (default: the pipeline's owner).")] = None,
    json: JsonOption = False,
) -> None:
    """Run a built pipeline again through Airflow, on its dataset or on new data."""
    settings = Settings.from_env()
    with session_scope(settings) as session:
        pipeline = session.get(schema.Pipeline, pipeline_id)
        if pipeline is None:
            fail(f"no pipeline {pipeline_id}; `dagsmith pipelines list` shows them", code=2)
        dataset, owner = Path(data or pipeline.dataset), user or pipeline.owner
    if not dataset.is_file():
        fail(f"the dataset {dataset} does not exist", code=2)
    execute_pipeline(pipeline_id, dataset.resolve(), runtime=runtime, user=owner, settings=settings, json=json)
