"""The catalog in the UI: browse and search microservices, one page per service, and the upload form.

Uploads go through exactly what ``dagsmith catalog add`` runs (staging, validation and scans, analysis,
embedding, indexing); the form only turns fields and files into a microservice folder. The author is the
logged-in user, not a field anyone can type.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated, Any

import yaml
from fastapi import APIRouter, Depends, File, Form, HTTPException, Request, UploadFile, status
from fastapi.responses import JSONResponse, Response
from sqlalchemy import select
from starlette.concurrency import run_in_threadpool

from dagsmith.catalog import repository, search, upload
from dagsmith.catalog.source import ENTRYPOINT, MANIFEST, REQUIREMENTS
from dagsmith.catalog.validation import MAX_FILE_BYTES
from dagsmith.config import Settings
from dagsmith.embeddings import default_embedder
from dagsmith.errors import InputError
from dagsmith.learning.patterns import service_statistics
from dagsmith.models.catalog import Finding, Stage, UploadOutcome, UploadResult
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from dagsmith.ui.access import BuilderDep, ViewerDep
from dagsmith.ui.pages import page, settings_of

router = APIRouter()
SettingsDep = Annotated[Settings, Depends(settings_of)]
#: How many services a plain-language search returns.
SEARCH_HITS = 20


def catalog_rows(settings: Settings, q: str = "", category: str = "", stage: str = "") -> dict[str, Any]:
    """The services matching the filters: by meaning when there is a query (best first), else by category."""
    with session_scope(settings) as session:
        rows = repository.listing(session)
    categories = sorted({row["category"] for row in rows})
    if q.strip():
        by_name = {row["name"]: row for row in rows}
        hits = search.search(q, k=SEARCH_HITS, settings=settings, embedder=default_embedder())
        rows = [{**by_name[hit.name], "score": hit.score} for hit in hits if hit.name in by_name]
    rows = [row for row in rows
            if (not category or row["category"] == category) and (not stage or row["stage"] == stage)]
    return {"query": q, "category": category, "stage": stage, "services": rows, "categories": categories,
            "stages": [s.value for s in Stage]}


def service_detail(settings: Settings, name: str) -> dict[str, Any]:
    """Both description layers side by side (the uploader's claims, what the code does) and the service's record."""
    with session_scope(settings) as session:
        detail = repository.detail(session, name)
        if detail is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, f"no microservice named '{name}' in the catalog")
        service_id = session.scalar(select(schema.Microservice.id).where(schema.Microservice.name == name))
        statistics = service_statistics(session, service_id)
    return {**detail.model_dump(mode="json"), "statistics": statistics}


@router.get("/api/catalog")
def api_catalog(viewer: ViewerDep, settings: SettingsDep, q: str = "", category: str = "", stage: str = "") -> dict:
    return catalog_rows(settings, q, category, stage)


@router.get("/api/catalog/{name}")
def api_service(name: str, viewer: ViewerDep, settings: SettingsDep) -> dict:
    return service_detail(settings, name)


@router.get("/catalog")
def catalog_page(request: Request, viewer: ViewerDep, settings: SettingsDep, q: str = "", category: str = "",
                 stage: str = "") -> Response:
    return page(request, "catalog.html", viewer=viewer, **catalog_rows(settings, q, category, stage))


@router.get("/catalog/{name}")
def service_page(request: Request, name: str, viewer: ViewerDep, settings: SettingsDep) -> Response:
    return page(request, "service.html", viewer=viewer, service=service_detail(settings, name))


# ---------------------------------------------------------------------------------------------- upload


async def _text(file: UploadFile | None, label: str) -> str:
    """An uploaded file as text, refused early when too large to be a microservice file or not UTF-8."""
    if file is None:
        return ""
    data = await file.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise _Refused(Finding(check="size", file=label, message=f"over the {MAX_FILE_BYTES:,}-byte limit per file"))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _Refused(Finding(check="encoding", file=label, message="is not UTF-8 text")) from None


class _Refused(InputError):
    """A form file refused before the upload's own checks; shown as one of its findings."""

    def __init__(self, finding: Finding):
        super().__init__(str(finding))
        self.finding = finding


def upload_service(settings: Settings, author: str, name: str, description: str, category: str,
                   python_version: str, keywords: str, code: str, requirements: str) -> UploadResult:
    """Write the form as a microservice folder and upload it as ``dagsmith catalog add`` does."""
    manifest = {"name": name.strip(), "description": description.strip(), "category": category.strip(),
                "python_version": python_version.strip(), "author": author,
                "keywords": [k.strip() for k in keywords.split(",") if k.strip()]}
    settings.staging_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=settings.staging_dir, prefix="form-") as folder:
        root = Path(folder) / (manifest["name"] or "unnamed")
        root.mkdir()
        (root / MANIFEST).write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
        if code:
            (root / ENTRYPOINT).write_text(code, encoding="utf-8")
        (root / REQUIREMENTS).write_text(requirements, encoding="utf-8")
        return upload.add(root, settings, default_embedder())


async def _upload_from_form(settings: Settings, viewer, name: str, description: str, category: str,
                            python_version: str, keywords: str, main: UploadFile | None,
                            requirements: UploadFile | None, requirements_text: str) -> UploadResult:
    try:
        code = await _text(main, ENTRYPOINT)
        pins = await _text(requirements, REQUIREMENTS) if requirements and requirements.filename else requirements_text
    except _Refused as refused:
        return UploadResult(name=name, outcome=UploadOutcome.REJECTED, findings=[refused.finding])
    return await run_in_threadpool(upload_service, settings, viewer.name, name, description, category, python_version,
                                   keywords, code, pins)


@router.post("/api/catalog", status_code=status.HTTP_201_CREATED)
async def api_upload(
    viewer: BuilderDep, settings: SettingsDep, name: Annotated[str, Form(max_length=100)],
    main: Annotated[UploadFile, File(description="main.py")], description: Annotated[str, Form()] = "",
    category: Annotated[str, Form()] = "", python_version: Annotated[str, Form()] = "3.11",
    keywords: Annotated[str, Form(description="comma-separated")] = "",
    requirements: Annotated[UploadFile | None, File(description="requirements.txt")] = None,
    requirements_text: Annotated[str, Form(description="requirements.txt as text")] = "",
) -> Response:
    """Upload a microservice; 201 with its analysis, or 422 with every reason it was rejected."""
    result = await _upload_from_form(settings, viewer, name, description, category, python_version, keywords, main,
                                     requirements, requirements_text)
    rejected = result.outcome is UploadOutcome.REJECTED
    return JSONResponse(result.model_dump(mode="json"),
                        status_code=status.HTTP_422_UNPROCESSABLE_CONTENT if rejected else status.HTTP_201_CREATED)


@router.get("/upload")
def upload_page(request: Request, viewer: BuilderDep) -> Response:
    """Step 1 of 2: what the uploader says the service is."""
    return page(request, "upload.html", viewer=viewer, step=1, form={"python_version": "3.11"}, stages=list(Stage))


@router.post("/upload/files")
def upload_files_page(request: Request, viewer: BuilderDep, name: Annotated[str, Form()] = "",
                      description: Annotated[str, Form()] = "", category: Annotated[str, Form()] = "",
                      python_version: Annotated[str, Form()] = "", keywords: Annotated[str, Form()] = "") -> Response:
    """Step 2 of 2: the code and its pinned requirements (the metadata rides along in the form)."""
    form = {"name": name.strip(), "description": description, "category": category, "python_version": python_version,
            "keywords": keywords}
    if not form["name"]:
        return page(request, "upload.html", status_code=422, viewer=viewer, step=1, form=form, stages=list(Stage),
                    problem="A microservice needs a name.")
    return page(request, "upload.html", viewer=viewer, step=2, form=form, stages=list(Stage))


@router.post("/upload")
async def upload_submit(
    request: Request, viewer: BuilderDep, settings: SettingsDep, name: Annotated[str, Form(max_length=100)],
    main: Annotated[UploadFile | None, File()] = None, description: Annotated[str, Form()] = "",
    category: Annotated[str, Form()] = "", python_version: Annotated[str, Form()] = "",
    keywords: Annotated[str, Form()] = "", requirements: Annotated[UploadFile | None, File()] = None,
    requirements_text: Annotated[str, Form()] = "",
) -> Response:
    result = await _upload_from_form(settings, viewer, name, description, category, python_version, keywords,
                                     main if main and main.filename else None, requirements, requirements_text)
    rejected = result.outcome is UploadOutcome.REJECTED
    return page(request, "upload_result.html", status_code=422 if rejected else 200, viewer=viewer, result=result,
                rejected=rejected)
