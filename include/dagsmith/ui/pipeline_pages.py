"""Pipelines in the UI: the ones a user may see (their own, shared ones; admins all), each with its runs,
the substitutions self-healing made, links to its DAG, its model versions with their last scorings and drift, and a
page per run with metrics and plots. Sharing a pipeline and choosing its champion are its owner's and admins'."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, HTTPException, Request, status
from fastapi.responses import FileResponse, RedirectResponse, Response
from sqlalchemy.orm import Session

from dagsmith.config import Settings
from dagsmith.errors import UserFacingError
from dagsmith.execution.answer import ANSWER_FILE
from dagsmith.execution.history import artifact_paths, execution_summary, pipeline_detail, pipeline_rows
from dagsmith.execution.quality import Quality
from dagsmith.execution.specs import dag_id, score_dag_id, spec_file, specs_dir, write_spec
from dagsmith.models.execution import FORECAST_FILE
from dagsmith.registry import records, versions
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from dagsmith.ui.access import Viewer, ViewerDep
from dagsmith.ui.pages import PREFIX, page, settings_of
from dagsmith.ui.report import render_report

router = APIRouter()
SettingsDep = Annotated[Settings, Depends(settings_of)]
#: Scoring runs a pipeline's page lists, latest first.
SCORINGS_SHOWN = 10


def _visible_pipeline(session: Session, viewer: Viewer, pipeline_id: int) -> schema.Pipeline:
    """The pipeline if this viewer may see it; someone else's private pipeline is as absent as a missing one."""
    pipeline = session.get(schema.Pipeline, pipeline_id)
    if pipeline is None or not viewer.sees(pipeline):
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no pipeline {pipeline_id} that you may see")
    return pipeline


def _changeable_pipeline(session: Session, viewer: Viewer, pipeline_id: int, change: str) -> schema.Pipeline:
    """The pipeline if this viewer may ``change`` it (its owner, admins); a 403 naming who may when they only see it."""
    pipeline = _visible_pipeline(session, viewer, pipeline_id)
    if not (viewer.is_admin or pipeline.owner == viewer.name):
        raise HTTPException(status.HTTP_403_FORBIDDEN, f"only {pipeline.owner} (or an admin) may {change} pipeline "
                                                       f"{pipeline_id}")
    return pipeline


def _visible_execution(session: Session, viewer: Viewer, execution_id: int) -> schema.Execution:
    execution = session.get(schema.Execution, execution_id)
    if execution is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no run {execution_id} that you may see")
    _visible_pipeline(session, viewer, execution.pipeline_id)
    return execution


def pipelines(settings: Settings, viewer: Viewer) -> list[dict[str, Any]]:
    with session_scope(settings) as session:
        rows = pipeline_rows(session, viewer.visible())
    return [{**row, "dag_id": dag_id(row["id"])} for row in rows]


def pipeline(settings: Settings, viewer: Viewer, pipeline_id: int) -> dict[str, Any]:
    with session_scope(settings) as session:
        detail = pipeline_detail(session, _visible_pipeline(session, viewer, pipeline_id))
        detail |= {"model_versions": records.listed(session, pipeline_id),
                   "scoring_runs": records.scorings(session, pipeline_id, limit=SCORINGS_SHOWN)}
    return {**detail, "dag_id": dag_id(pipeline_id), "score_dag_id": score_dag_id(pipeline_id),
            "may_change": viewer.is_admin or detail["owner"] == viewer.name}


def run(settings: Settings, viewer: Viewer, execution_id: int) -> dict[str, Any]:
    with session_scope(settings) as session:
        summary = execution_summary(session, _visible_execution(session, viewer, execution_id)).model_dump()
    summary["plots"] = [{"name": Path(p).name, "url": f"{PREFIX}/runs/{execution_id}/plots/{i}"}
                        for i, p in enumerate(summary["artifacts"])]
    summary["held_out"] = Quality(**summary["quality"]).beside_baselines() if summary["quality"] else []
    summary["forecast_url"] = f"{PREFIX}/runs/{execution_id}/forecast" if summary["forecast"] else None
    return summary


def set_shared(settings: Settings, viewer: Viewer, pipeline_id: int, shared: bool) -> None:
    with session_scope(settings) as session:
        _changeable_pipeline(session, viewer, pipeline_id, "share").shared = shared
    if spec_file(specs_dir(settings), pipeline_id).is_file():  # its DAG grants it to everyone, or its owner, again
        write_spec(pipeline_id, settings)


def decide(settings: Settings, viewer: Viewer, pipeline_id: int, change: Callable[[str], dict]) -> dict:
    """``change`` (``registry.versions``' promote or rollback, as ``dagsmith models`` calls it, given who decides)
    made by this viewer, when they may choose the pipeline's champion; its refusal (no such version, already the
    champion) answered as an HTTP error saying why."""
    with session_scope(settings) as session:
        _changeable_pipeline(session, viewer, pipeline_id, "choose the champion of")
    try:
        return change(viewer.name)
    except UserFacingError as exc:
        raise HTTPException(exc.http_status, str(exc)) from None


@router.get("/api/pipelines")
def api_pipelines(viewer: ViewerDep, settings: SettingsDep) -> list[dict]:
    return pipelines(settings, viewer)


@router.get("/api/pipelines/{pipeline_id}")
def api_pipeline(pipeline_id: int, viewer: ViewerDep, settings: SettingsDep) -> dict:
    return pipeline(settings, viewer, pipeline_id)


@router.put("/api/pipelines/{pipeline_id}/shared")
def api_share(pipeline_id: int, shared: bool, viewer: ViewerDep, settings: SettingsDep) -> dict:
    set_shared(settings, viewer, pipeline_id, shared)
    return {"id": pipeline_id, "shared": shared}


@router.post("/api/pipelines/{pipeline_id}/versions/{version}/promote")
def api_promote(pipeline_id: int, version: int, viewer: ViewerDep, settings: SettingsDep) -> dict:
    """Make ``version`` the champion; the champion it replaces retires."""
    return decide(settings, viewer, pipeline_id, lambda by: versions.promote(settings, pipeline_id, version, by=by))


@router.post("/api/pipelines/{pipeline_id}/rollback")
def api_rollback(pipeline_id: int, viewer: ViewerDep, settings: SettingsDep, version: int | None = None) -> dict:
    """Bring back the champion the current one replaced (or ``version``); the current one retires."""
    return decide(settings, viewer, pipeline_id, lambda by: versions.rollback(settings, pipeline_id, version, by=by))


@router.get("/api/runs/{execution_id}")
def api_run(execution_id: int, viewer: ViewerDep, settings: SettingsDep) -> dict:
    return run(settings, viewer, execution_id)


@router.get("/pipelines")
def pipelines_page(request: Request, viewer: ViewerDep, settings: SettingsDep) -> Response:
    return page(request, "pipelines.html", viewer=viewer, pipelines=pipelines(settings, viewer))


@router.get("/pipelines/{pipeline_id}")
def pipeline_page(request: Request, pipeline_id: int, viewer: ViewerDep, settings: SettingsDep) -> Response:
    return page(request, "pipeline.html", viewer=viewer, pipeline=pipeline(settings, viewer, pipeline_id))


@router.post("/pipelines/{pipeline_id}/shared")
def share_page(pipeline_id: int, viewer: ViewerDep, settings: SettingsDep,
               shared: Annotated[bool, Form()] = False) -> Response:
    set_shared(settings, viewer, pipeline_id, shared)
    return RedirectResponse(f"{PREFIX}/pipelines/{pipeline_id}", status_code=303)


@router.post("/pipelines/{pipeline_id}/versions/{version}/promote")
def promote_page(pipeline_id: int, version: int, viewer: ViewerDep, settings: SettingsDep) -> Response:
    api_promote(pipeline_id, version, viewer, settings)
    return RedirectResponse(f"{PREFIX}/pipelines/{pipeline_id}#versions", status_code=303)


@router.post("/pipelines/{pipeline_id}/rollback")
def rollback_page(pipeline_id: int, viewer: ViewerDep, settings: SettingsDep) -> Response:
    api_rollback(pipeline_id, viewer, settings)
    return RedirectResponse(f"{PREFIX}/pipelines/{pipeline_id}#versions", status_code=303)


@router.get("/runs/{execution_id}")
def run_page(request: Request, execution_id: int, viewer: ViewerDep, settings: SettingsDep) -> Response:
    return page(request, "run.html", viewer=viewer, run=run(settings, viewer, execution_id))


@router.get("/runs/{execution_id}/report")
def report_page(request: Request, execution_id: int, viewer: ViewerDep, settings: SettingsDep) -> Response:
    """The run's answer.md, rendered; its plots are served by position like the run page's."""
    with session_scope(settings) as session:
        workspace = Path(_visible_execution(session, viewer, execution_id).workspace or "")
    file = workspace / ANSWER_FILE
    if not file.is_file():
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"run {execution_id} has no report yet")
    plots = {p.relative_to(workspace).as_posix(): i for i, p in enumerate(artifact_paths(workspace))}
    body = render_report(file.read_text(encoding="utf-8"),
                         lambda src: f"{PREFIX}/runs/{execution_id}/plots/{plots[src]}" if src in plots else None)
    return page(request, "report.html", viewer=viewer, execution_id=execution_id, body=body)


@router.get("/runs/{execution_id}/forecast")
def forecast(execution_id: int, viewer: ViewerDep, settings: SettingsDep) -> Response:
    """A forecast's values past the data (``forecast.csv``), to download."""
    with session_scope(settings) as session:
        workspace = Path(_visible_execution(session, viewer, execution_id).workspace or "")
    file = workspace / FORECAST_FILE
    if not file.is_file():
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"run {execution_id} made no forecast past its data")
    return FileResponse(file, media_type="text/csv", filename=f"run-{execution_id}-forecast.csv")


@router.get("/runs/{execution_id}/plots/{index}")
def plot(execution_id: int, index: int, viewer: ViewerDep, settings: SettingsDep) -> Response:
    """A run's plot by its position (never by a path from the request)."""
    with session_scope(settings) as session:
        workspace = Path(_visible_execution(session, viewer, execution_id).workspace or "")
    plots = artifact_paths(workspace)
    if not 0 <= index < len(plots):
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"run {execution_id} has no plot {index}")
    return FileResponse(plots[index], media_type="image/png")
