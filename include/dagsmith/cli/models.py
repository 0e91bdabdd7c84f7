"""``dagsmith models``: the versions of a pipeline's model, and choosing its champion by hand."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape

from dagsmith.cli.output import JsonOption, console, print_json, print_rows
from dagsmith.config import Settings
from dagsmith.errors import InputError
from dagsmith.registry import records, versions
from dagsmith.registry.mlflow import sentence
from dagsmith.store import schema
from dagsmith.store.db import session_scope

app = typer.Typer(help="List a pipeline's model versions, and promote or roll back its champion.",
                  no_args_is_help=True)
PipelineId = Annotated[int, typer.Argument(help="Pipeline id (see `dagsmith pipelines list`).")]
User = Annotated[str | None, typer.Option(help="Who decides (default: the pipeline's owner).")]
#: Scoring runs `models show` lists per version, latest first.
SCORINGS_SHOWN = 5


def _pipeline(session, pipeline_id: int) -> schema.Pipeline:
    pipeline = session.get(schema.Pipeline, pipeline_id)
    if pipeline is None:
        raise InputError(f"no pipeline {pipeline_id}; `dagsmith pipelines list` shows them")
    return pipeline


@app.command("list")
def list_versions(pipeline_id: PipelineId, json: JsonOption = False) -> None:
    """Every version of the pipeline's model: its status, score, run, and why it has that status."""
    with session_scope() as session:
        _pipeline(session, pipeline_id)
        rows = records.listed(session, pipeline_id)
    print_rows(rows, json, {"version": "version", "status": "status", "score": "score", "run": "execution_id",
                            "created": "created_at", "reason": "reason"})


@app.command()
def show(pipeline_id: PipelineId, version: Annotated[int | None, typer.Argument(help="Version (default: the "
                                                                                     "champion).")] = None,
         json: JsonOption = False) -> None:
    """A version: its folder, held-out metrics, training data, the columns it scores, the decision on it and its
    latest scoring runs with their drift."""
    with session_scope() as session:
        _pipeline(session, pipeline_id)
        row = versions.find(session, pipeline_id, version)
        detail = {**versions.version_row(row), "schema": row.schema,
                  "scoring_runs": records.scorings(session, pipeline_id, limit=SCORINGS_SHOWN, version_id=row.id)}
    if json:
        print_json(detail)
        return
    decision = detail["decision"]
    console.print(f"[bold]version {detail['version']}[/] of pipeline {pipeline_id}: {detail['status']} "
                  f"(run {detail['execution_id']}, {detail['created_at']})", highlight=False)
    console.print(f"  why: {escape(str(decision.get('reason')))} (decided by {decision.get('by')})", highlight=False)
    console.print(f"  folder: {escape(detail['path'])}", highlight=False)
    if told := sentence(detail["mlflow"]):
        console.print(f"  {escape(told)}", highlight=False)
    console.print(f"  trained on: sha256 {detail['fingerprint'][:16]}…", highlight=False)
    metrics = ", ".join(f"{k} {v:.4f}" for k, v in detail["metrics"].items() if isinstance(v, float))
    console.print(f"  held-out: {metrics or 'no metrics'}", highlight=False)
    features = detail["schema"].get("features", [])
    console.print(f"  scores rows with: {escape(', '.join(f['name'] for f in features))}", highlight=False)
    for run in detail["scoring_runs"]:
        drift = f", [bold red]drifted: {escape(', '.join(run['drifted']))}[/]" if run["drifted"] else ", no drift"
        console.print(f"  scored {run['rows']:,} rows of {escape(run['dataset'])} at {run['at']}{drift}",
                      highlight=False)


def _decided(row: dict[str, Any], json: bool) -> None:
    if json:
        print_json(row)
        return
    told = sentence(row.get("mlflow"))
    console.print(f"version {row['version']} of pipeline {row['pipeline_id']} is the champion: "
                  f"{escape(row['decision']['reason'])}{f'. {escape(told)}' if told else ''}", highlight=False)


def _who(pipeline_id: int, user: str | None) -> str:
    with session_scope() as session:
        return user or _pipeline(session, pipeline_id).owner


@app.command()
def promote(pipeline_id: PipelineId, version: Annotated[int, typer.Argument(help="The version to make champion.")],
            user: User = None, json: JsonOption = False) -> None:
    """Make a version the champion by hand (`dagsmith predict` scores with it); the champion it replaces retires."""
    _decided(versions.promote(Settings.from_env(), pipeline_id, version, by=_who(pipeline_id, user)), json)


@app.command()
def rollback(pipeline_id: PipelineId,
             version: Annotated[int | None, typer.Argument(help="The version to bring back (default: the champion "
                                                               "the current one replaced).")] = None,
             user: User = None, json: JsonOption = False) -> None:
    """Bring back the previous champion (or VERSION); the current one retires."""
    _decided(versions.rollback(Settings.from_env(), pipeline_id, version, by=_who(pipeline_id, user)), json)
