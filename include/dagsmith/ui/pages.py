"""What every page module shares: the templates, where the plugin is mounted and the deployment's settings.

It sits below ``app`` (which mounts the page modules' routers), so the page modules never import the app.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import Request
from fastapi.responses import Response
from fastapi.templating import Jinja2Templates

from dagsmith.config import Settings
from dagsmith.ui import PREFIX

templates = Jinja2Templates(directory=Path(__file__).parent / "templates")


def metric(value: float) -> str:
    """A metric as a person reads it: counts whole (3, not 3.0000), scores to four decimals."""
    return str(int(value)) if float(value).is_integer() else f"{value:.4f}"


templates.env.filters["metric"] = metric


def settings_of(request: Request) -> Settings:
    """The deployment's settings, read from the environment once per app."""
    app = request.app
    if getattr(app.state, "settings", None) is None:
        app.state.settings = Settings.from_env()
    return app.state.settings


def page(request: Request, template: str, status_code: int = 200, **context) -> Response:
    return templates.TemplateResponse(request, template, {"prefix": PREFIX, **context}, status_code=status_code)
