"""``dagsmith pipelines``: the pipelines dagsmith has built, their runs, and reruns on new data."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from dagsmith.cli.output import JsonOption, console, fail, print_json, print_rows
from dagsmith.cli.run import execute_pipeline
from dagsmith.config import Settings
from dagsmith.execution.export import export_pipeline
from dagsmith.execution.history import pipeline_detail, pipeline_rows
from dagsmith.execution.reaper import reap as reap_lost
from dagsmith.store import schema
from dagsmith.store.db import session_scope

app = typer.Typer(help="List, inspect and re-run built pipelines.", no_args_is_help=True)


@app.command("list")
def list_pipelines(
    owner: Annotated[str | None, typer.Option(help="Only this owner's pipelines.")] = None,
    json: JsonOption = False,
) -> None:
    """Every pipeline with its status, owner and number of runs."""
    with session_scope() as session:
        rows = pipeline_rows(session, schema.Pipeline.owner == owner if owner else None)
    print_rows(rows, json, {"id": "id", "name": "name", "status": "status", "owner": "owner", "task": "task_type",
                            "target": "target", "runs": "runs"})


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
        detail = pipeline_detail(session, pipeline)
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


@app.command()
def reap(
    idle_minutes: Annotated[int, typer.Option(min=1, help="Quiet time after which a run with no step running is "
                                                          "abandoned.")] = 60,
    json: JsonOption = False,
) -> None:
    """Close what dead workers left 'running': tries whose worker stopped beating, their runs, runs idle for
    IDLE_MINUTES, and their containers. Every run start does it too."""
    reaped = reap_lost(Settings.from_env(), timedelta(minutes=idle_minutes))
    if json:
        print_json(dataclasses.asdict(reaped))
        return
    runs = f": {', '.join(map(str, reaped.runs))}" if reaped.runs else ""
    console.print(f"closed {len(reaped.tries)} lost try(s) and {len(reaped.runs)} abandoned run(s){runs}; removed "
                  f"{reaped.containers} container(s) or pod(s)", highlight=False)


@app.command()
def export(
    pipeline_id: Annotated[int, typer.Argument(help="Pipeline id.")],
    out: Annotated[Path, typer.Option("--out", help="Where to write the DAG file and its folder: an Airflow DAGs "
                                                    "folder, or anywhere to copy from.")] = Path("."),
    workspaces: Annotated[Path | None, typer.Option(help="Where each run of the exported DAG makes its folders "
                                                         "(default: beside the DAG file; a run may change it).")]
    = None,
    json: JsonOption = False,
) -> None:
    """Write a pipeline as a standalone DAG that runs on any Airflow 3 with the Docker provider and dagsmith's
    runtime image, without dagsmith installed: each step its service, fixed as now, in a sandboxed container."""
    settings = Settings.from_env()
    dag_file = export_pipeline(pipeline_id, out.resolve(), settings, workspace_root=workspaces)
    folder = dag_file.with_suffix("")
    if json:
        print_json({"dag_file": str(dag_file), "folder": str(folder), "dag_id": folder.name})
        return
    console.print(f"wrote {escape(str(dag_file))} and {escape(str(folder))}/ (DAG [bold]{folder.name}[/]); put both in "
                  f"an Airflow DAGs folder, or run it once with `airflow dags test {folder.name}`", highlight=False)
