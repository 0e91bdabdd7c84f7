"""The catalog-indexing DAG, run for real by Airflow (dag.test) against the real store."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from dagsmith.catalog import repository
from dagsmith.store.db import session_scope
from tests.conftest import CATALOG, ROOT, UPLOADS

RUN_DAG = """
import json, sys
sys.path.insert(0, {dags!r})
import dagsmith_catalog_sync
run = dagsmith_catalog_sync.dag.test(run_conf={{"directory": sys.argv[1]}})
print("RESULT " + json.dumps({{"state": str(run.state)}}))
"""


def _run_dag(folder, settings, tmp_path) -> tuple[str, str]:
    airflow_home = tmp_path / "airflow"
    env = {
        **os.environ, "AIRFLOW_HOME": str(airflow_home), "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False", "DAGSMITH_DATABASE_URL": settings.database_url,
        "DAGSMITH_HOME": str(settings.home),
    }
    migrate = subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"], env=env, capture_output=True,
                             text=True, timeout=300)
    assert migrate.returncode == 0, migrate.stderr[-2000:]
    proc = subprocess.run([sys.executable, "-c", RUN_DAG.format(dags=str(ROOT / "dags")), str(folder)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.split("RESULT ", 1)[1].splitlines()[0])
    return result["state"], proc.stdout + proc.stderr


def test_dag_indexes_a_folder_and_fails_visibly_on_a_rejected_upload(settings, tmp_path):
    folder = tmp_path / "uploads"
    for name in ("deduplicator", "robust_scaler"):
        shutil.copytree(CATALOG / name, folder / name)
    shutil.copytree(UPLOADS / "socket_exfiltration", folder / "socket_exfiltration")
    state, log = _run_dag(folder, settings, tmp_path)
    assert state == "failed"
    assert "rejected socket_exfiltration" in log and "imports socket" in log
    with session_scope(settings) as session:
        assert repository.names(session) == ["deduplicator", "robust_scaler"]
    shutil.rmtree(folder / "socket_exfiltration")
    state, _ = _run_dag(folder, settings, tmp_path)
    assert state == "success"
