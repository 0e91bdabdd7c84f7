"""The plugin's FastAPI app: HTML pages under ``/dagsmith/`` and their JSON twins under ``/dagsmith/api/``.

Pages and JSON share one set of functions per area (``catalog_pages``, ``build_pages``, ``pipeline_pages``), so
what a script gets from the API is what a person sees. Errors are pages for people (a login redirect when the
session is missing) and ``{"detail": ...}`` for scripts.
"""

from __future__ import annotations

from pathlib import Path

from airflow.api_fastapi.app import get_auth_manager
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException

from dagsmith.config import Settings
from dagsmith.ui.access import ViewerDep

templates = Jinja2Templates(directory=Path(__file__).parent / "templates")


def metric(value: float) -> str:
    """A metric as a person reads it: counts whole (3, not 3.0000), scores to four decimals."""
    return str(int(value)) if float(value).is_integer() else f"{value:.4f}"


templates.env.filters["metric"] = metric
#: Where the plugin is mounted in Airflow's api-server.
PREFIX = "/dagsmith"


def settings_of(request: Request) -> Settings:
    """The deployment's settings, read from the environment once per app."""
    app = request.app
    if getattr(app.state, "settings", None) is None:
        app.state.settings = Settings.from_env()
    return app.state.settings


def page(request: Request, template: str, status_code: int = 200, **context) -> Response:
    return templates.TemplateResponse(request, template, {"prefix": PREFIX, **context}, status_code=status_code)


def _is_api(request: Request) -> bool:
    return request.url.path.startswith(f"{PREFIX}/api/") or request.url.path.startswith("/api/")


async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
    if _is_api(request):
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers)
    if exc.status_code == 401:
        return RedirectResponse(get_auth_manager().get_url_login(next_url=str(request.url)), status_code=303)
    return page(request, "error.html", status_code=exc.status_code, message=exc.detail, viewer=None)


def create_app() -> FastAPI:
    from dagsmith.ui import build_pages, catalog_pages, pipeline_pages

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
