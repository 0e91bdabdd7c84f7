"""An ASGI app built on its first request.

Airflow loads every plugin in every process it starts: the scheduler, the dag-processor, the triggerer and each
task's process on a Celery worker or in a pod, although only the api-server serves the plugin's pages. Building
dagsmith's app when the plugin is imported (FastAPI, the templates, the pages' modules) cost each of those processes
about 2 s, paid by every task on a Celery worker. Built on the first request, it costs only the api-server, once.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send  # types only: importing them loads no app


class BuiltOnFirstRequest:
    """Serves the app ``build`` returns, calling it on the first request only. The check and the build run without
    an ``await`` between them, so on one event loop two first requests cannot both build it."""

    def __init__(self, build: Callable[[], ASGIApp]) -> None:
        self._build = build
        self._app: ASGIApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._app is None:
            self._app = self._build()
        await self._app(scope, receive, send)
