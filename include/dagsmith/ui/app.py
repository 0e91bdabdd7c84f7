"""The plugin's FastAPI app: HTML pages under ``/dagsmith/`` and their JSON twins under ``/dagsmith/api/``.

Pages and JSON share one set of functions per area (``catalog_pages``, ``build_pages``, ``pipeline_pages``), so
what a script gets from the API is what a person sees. Errors are pages for people (a login redirect when the
session is missing) and ``{"detail": ...}`` for scripts.
"""

from __future__ import annotations

from airflow.api_fastapi.app import get_auth_manager
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from dagsmith.ui import build_pages, catalog_pages, pipeline_pages
from dagsmith.ui.access import ViewerDep
from dagsmith.ui.pages import PREFIX, page


def _is_api(request: Request) -> bool:
    return request.url.path.startswith(f"{PREFIX}/api/") or request.url.path.startswith("/api/")


async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
    if _is_api(request):
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers)
    if exc.status_code == 401:
        return RedirectResponse(get_auth_manager().get_url_login(next_url=str(request.url)), status_code=303)
    return page(request, "error.html", status_code=exc.status_code, message=exc.detail, viewer=None)


def create_app() -> FastAPI:
    # No anonymous docs: the schema is served to logged-in users only, like everything else here.
    app = FastAPI(title="dagsmith", description="Catalog, upload, build and pipelines of dagsmith in Airflow.",
                  docs_url=None, redoc_url=None, openapi_url=None)
    app.add_exception_handler(StarletteHTTPException, _http_error)  # FastAPI's own is a subclass
    for module in (catalog_pages, build_pages, pipeline_pages):
        app.include_router(module.router)
    app.add_api_route("/", lambda: RedirectResponse(f"{PREFIX}/catalog", status_code=303), include_in_schema=False)

    @app.get("/api/openapi.json", include_in_schema=False)
    def schema(viewer: ViewerDep) -> dict:
        return app.openapi()

    return app
