"""A local run's in-process execution API, built for the task SDK's version alone, serves that version as Airflow
would."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# In a child interpreter: the narrowing rebinds Airflow's module-level bundle and router for the whole process.
_COMPARE = """
import json
from airflow.api_fastapi.execution_api.app import create_task_execution_api_app
from airflow.sdk.api.datamodels._generated import API_VERSION
from dagsmith.airflow.execution_api import serve_only_the_sdk_version

def served(app):
    app._cadwyn_initialize()
    return {version: sorted(f"{sorted(route.methods or [])} {route.path}" for route in router.routes)
            for version, router in app.router.versioned_routers.items()}

full = served(create_task_execution_api_app())
narrowed = serve_only_the_sdk_version()
print(json.dumps({"sdk": API_VERSION, "narrowed": narrowed, "full": full,
                  "alone": served(create_task_execution_api_app())}))
"""


def test_the_api_built_for_the_sdk_version_alone_serves_it_as_the_full_api_does(tmp_path):
    env = {**os.environ, "AIRFLOW_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", _COMPARE], env=env, capture_output=True, text=True, check=True)
    seen = json.loads(out.stdout.splitlines()[-1])
    assert seen["narrowed"], "this Airflow's execution API no longer has the task SDK's version at its head"
    assert len(seen["full"]) > 1
    assert list(seen["alone"]) == [seen["sdk"]]
    assert seen["alone"][seen["sdk"]] == seen["full"][seen["sdk"]]
