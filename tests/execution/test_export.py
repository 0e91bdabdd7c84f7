"""``dagsmith pipelines export``: the standalone DAG runs with ``airflow dags test`` in a Python that cannot import
dagsmith (its site-packages without the ``.pth`` files that put dagsmith on the path), each step a sandboxed
container of the runtime image (real podman); once the pipeline has a champion, the exported file's scoring DAG
scores new rows with it the same way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pandas as pd

from dagsmith import datasets
from dagsmith.agents.planner import plan
from dagsmith.registry.runs import register_run
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from tests.conftest import ROOT
from tests.execution.test_pipeline_runs import _metrics
from tests.runtime.test_docker_runtime import runtime as container_runtime  # noqa: F401 (a fixture)

DAGSMITH = str(ROOT / ".venv" / "bin" / "dagsmith")
#: Replaces the last step's service in the export: reports what the container allowed it, in its output folder.
PROBE = """import ctypes, json, os, sys
output = sys.argv[sys.argv.index("--output") + 1]
libc = ctypes.CDLL(None, use_errno=True)
unshare = "made" if libc.unshare(0x10000000) == 0 else os.strerror(ctypes.get_errno())  # CLONE_NEWUSER
try:
    open("/written-to-root", "w")
    root = "writable"
except OSError as error:
    root = error.strerror
status = dict(line.split(":\\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\\t" in line)
json.dump({"uid": os.getuid(), "root": root, "bounding_caps": status["CapBnd"].strip(),
           "network": sorted(os.listdir("/sys/class/net")), "user_namespace": unshare},
          open(os.path.join(output, "probe.json"), "w"))
"""


def _without_dagsmith(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """``python -S`` with the site-packages on the path: the packages are there, dagsmith's editable install is not."""
    return subprocess.run([sys.executable, "-S", *args], capture_output=True, text=True, timeout=900,
                          env={**env, "PYTHONPATH": sysconfig.get_paths()["purelib"]})


def _export(pipeline_id: int, dags: Path, env: dict[str, str]) -> dict:
    exported = subprocess.run([DAGSMITH, "pipelines", "export", str(pipeline_id), "--out", str(dags), "--json"],
                              capture_output=True, text=True, env=env, timeout=300)
    assert exported.returncode == 0, exported.stderr
    return json.loads(exported.stdout)


def test_an_exported_pipeline_runs_on_airflow_without_dagsmith(store, embedder, container_runtime,  # noqa: F811
                                                                tmp_path):
    data = tmp_path / "penguins.csv"
    datasets.load("penguins").to_csv(data, index=False)
    planned = plan(data, "predict the species", settings=store, embedder=embedder).pipeline
    env = {**os.environ, "DAGSMITH_DATABASE_URL": store.database_url, "DAGSMITH_HOME": str(store.home)}
    dags = tmp_path / "dags"
    written = _export(planned.id, dags, env)
    dag_file, folder = Path(written["dag_file"]), Path(written["folder"])
    assert "dagsmith" not in {line.split()[1].split(".")[0] for line in dag_file.read_text().splitlines()
                              if line.startswith(("import ", "from "))}
    spec = json.loads((folder / "pipeline.json").read_text())
    assert [s["service"] for s in spec["steps"]] == [s.microservice for s in planned.steps]
    assert spec["scoring"] is None and not (folder / "model").exists()  # no model version yet: no scoring DAG
    last = spec["steps"][-1]
    probe = folder / "services" / last["service"] / "main.py"
    probe.chmod(0o644)
    probe.write_text(PROBE)

    airflow = {**os.environ, "AIRFLOW_HOME": str(tmp_path / "airflow"), "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
               "AIRFLOW__CORE__LOAD_EXAMPLES": "False", "DOCKER_HOST": container_runtime.base_url}
    for name in ("DAGSMITH_DATABASE_URL", "DAGSMITH_HOME"):
        airflow.pop(name, None)
    control = _without_dagsmith(["-c", "import dagsmith"], airflow)
    assert "No module named 'dagsmith'" in control.stderr
    migrated = _without_dagsmith(["-m", "airflow", "db", "migrate"], airflow)
    assert migrated.returncode == 0, migrated.stderr[-2000:]
    conf = json.dumps({"dataset": str(data)})
    ran = _without_dagsmith(["-m", "airflow", "dags", "test", written["dag_id"], "-c", conf], airflow)
    log = ran.stdout + ran.stderr
    assert ran.returncode == 0 and "state=success" in log, log[-4000:]

    workspace = next(Path(spec["workspace_root"]).iterdir())
    metrics = _metrics(workspace)
    assert metrics["accuracy"] > 0.9 and "the run's folders" in log
    seen = json.loads((workspace / "steps" / f"{last['position']:02d}" / "probe.json").read_text())
    assert seen == {"uid": 10001, "root": "Read-only file system", "bounding_caps": "0000000000000000",
                    "network": ["lo"], "user_namespace": "Operation not permitted"}

    # The run's model registered as dagsmith registers a completed run's: the export now scores with it too.
    with session_scope(store) as session:
        run = schema.Execution(pipeline_id=planned.id, owner=planned.owner, status="completed", dataset=str(data),
                               workspace=str(workspace), trace={})
        session.add(run)
        session.flush()
        execution_id = run.id
    assert register_run(execution_id, settings=store)["status"] == "champion"
    written = _export(planned.id, dags, env)
    scoring = json.loads((folder / "pipeline.json").read_text())["scoring"]
    assert scoring["version"] == 1 and (folder / "model" / "schema.json").is_file()
    new = tmp_path / "new-penguins.csv"
    rows = datasets.load("penguins").drop(columns=["species"]).sample(100, random_state=1)
    rows.to_csv(new, index=False)
    ran = _without_dagsmith(["-m", "airflow", "dags", "test", scoring["dag_id"], "-c",
                             json.dumps({"dataset": str(new)})], airflow)
    log = ran.stdout + ran.stderr
    assert ran.returncode == 0 and "state=success" in log, log[-4000:]
    [scored] = [p for p in Path(spec["workspace_root"]).iterdir() if p.name.startswith("score-")]
    predicted = pd.read_parquet(scored / "output" / "predictions.parquet")
    assert len(predicted) == 100 and set(predicted["prediction"]) <= {"Adelie", "Chinstrap", "Gentoo"}
    report = json.loads((scored / "output" / "scoring.json").read_text())
    assert report["rows_scored"] == 100 and report["extra_columns"] == [], report


def test_exporting_an_unknown_pipeline_says_so(store, tmp_path):
    env = {**os.environ, "DAGSMITH_DATABASE_URL": store.database_url, "DAGSMITH_HOME": str(store.home)}
    result = subprocess.run([DAGSMITH, "pipelines", "export", "999", "--out", str(tmp_path)], capture_output=True,
                            text=True, env=env, timeout=300)
    assert result.returncode == 2 and "no pipeline 999" in result.stdout + result.stderr
    assert "Traceback" not in result.stderr and not list(tmp_path.iterdir())
