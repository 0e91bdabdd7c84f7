"""dagsmith's pages in the Airflow UI: catalog, upload, build and pipelines (see dagsmith.ui).

The app is built on its first request (``dagsmith.ui.deferred``): Airflow imports this file in every process it
starts, each task's included, and only the api-server serves pages. The pipelines' task code is imported here
instead, for the processes that fork others: the dag-processor's parsing processes start with it loaded. The
processes that fork tasks load the rest of dagsmith's task code themselves (``dagsmith.airflow.forks``).
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
