"""dagsmith's pages in the Airflow UI: catalog, upload, build and pipelines (see dagsmith.ui)."""

from airflow.plugins_manager import AirflowPlugin

from dagsmith.ui.app import create_app
from dagsmith.ui.pages import PREFIX

PAGES = {"Catalog": "catalog", "Upload": "upload", "Build": "build", "Pipelines": "pipelines"}


class DagsmithPlugin(AirflowPlugin):
    name = "dagsmith"
    fastapi_apps = [{"app": create_app(), "url_prefix": PREFIX, "name": "dagsmith"}]
    external_views = [
        {"name": title, "href": f"{PREFIX.lstrip('/')}/{path}", "url_route": f"dagsmith-{path}",
         "destination": "nav", "category": "dagsmith"}
        for title, path in PAGES.items()
    ]
