"""dagsmith's pages in the Airflow UI: catalog, upload, build and pipelines (see dagsmith.ui).

The app is built on its first request (``dagsmith.ui.deferred``): Airflow imports this file in every process it
starts, each task's included, and only the api-server serves pages. The pipelines' task code is imported here
instead: the scheduler loads plugins before its LocalExecutor forks task processes, and a dagsmith Celery worker
before it forks its pool (``dagsmith.airflow.worker``), so tasks start with that code loaded rather than importing
it each (0.6 s a task).
"""

from airflow.plugins_manager import AirflowPlugin
from starlette.types import ASGIApp

import dagsmith.airflow.pipeline_dag  # noqa: F401 - imported for the processes that fork tasks (above)
from dagsmith.ui import PREFIX
from dagsmith.ui.deferred import BuiltOnFirstRequest

PAGES = {"Catalog": "catalog", "Upload": "upload", "Build": "build", "Pipelines": "pipelines"}


def _build() -> ASGIApp:
    from dagsmith.ui.app import create_app

    return create_app()


class DagsmithPlugin(AirflowPlugin):
    name = "dagsmith"
    fastapi_apps = [{"app": BuiltOnFirstRequest(_build), "url_prefix": PREFIX, "name": "dagsmith"}]
    external_views = [
        {"name": title, "href": f"{PREFIX.lstrip('/')}/{path}", "url_route": f"dagsmith-{path}",
         "destination": "nav", "category": "dagsmith"}
        for title, path in PAGES.items()
    ]
