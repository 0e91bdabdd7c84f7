"""The plugin's app is built by the api-server's first request, not by every process that loads Airflow's plugins."""

from __future__ import annotations

import os
import subprocess
import sys

from fastapi import FastAPI
from fastapi.testclient import TestClient

from dagsmith.ui.deferred import BuiltOnFirstRequest
from tests.conftest import ROOT


def test_loading_the_plugin_builds_no_app():
    """Each task's process loads the plugin; building the pages there cost every task on a Celery worker 2 s."""
    code = ("import sys, dagsmith_ui\n"
            "assert dagsmith_ui.DagsmithPlugin.fastapi_apps[0]['url_prefix'] == '/dagsmith'\n"
            "print(sorted(m for m in ('dagsmith.ui.app', 'dagsmith.ui.pages', 'fastapi') if m in sys.modules))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "include"), str(ROOT / "plugins")])}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[]"


def test_the_app_is_built_on_the_first_request_once_and_serves_every_request():
    built = []

    def build() -> FastAPI:
        app = FastAPI()
        app.add_api_route("/hello", lambda: {"built": len(built)})
        built.append(app)
        return app

    host = FastAPI()
    host.mount("/dagsmith", BuiltOnFirstRequest(build))
    assert built == []
    with TestClient(host) as client:
        assert [client.get("/dagsmith/hello").json() for _ in range(3)] == [{"built": 1}] * 3
        assert client.get("/dagsmith/missing").status_code == 404
    assert len(built) == 1
