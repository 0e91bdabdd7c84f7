"""An embedded Airflow for one machine: its home and SQLite metadata under DAGSMITH_HOME/airflow.

``dagsmith run`` uses it to run a pipeline's DAG in-process (``dag.test()``), no scheduler needed.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from dagsmith import scratch
from dagsmith.airflow import watch
from dagsmith.airflow.pipeline_shards import dag_file_name
from dagsmith.config import EXECUTION_VARIABLE, LOCAL_CLI_VARIABLE, WORKSPACE_ROOT_VARIABLE, Settings
from dagsmith.execution.specs import dag_id

DAGS_FOLDER = Path(__file__).resolve().parents[3] / "dags"


def airflow_env(settings: Settings, *, local_cli: bool = False) -> dict[str, str]:
    """Environment for Airflow processes that run dagsmith's DAGs against this machine's store.

    ``local_cli`` marks the local CLI's own runs (``DAGSMITH_LOCAL_CLI=1``), whose datasets may lie outside the
    data roots (``dagsmith.data.roots``). The mark lives in the process environment, which no trigger's conf
    reaches, and is set here only: an inherited one is dropped, so a deployment built on this (``dagsmith serve``)
    always confines datasets. So is an inherited recorded execution (``start_dag_test`` sets its own).
    """
    home = settings.home / "airflow"
    env = {
        **{name: value for name, value in os.environ.items() if name not in (LOCAL_CLI_VARIABLE, EXECUTION_VARIABLE)},
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS_FOLDER),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
        "DAGSMITH_HOME": str(settings.home),
    }
    if settings.database_url:
        env["DAGSMITH_DATABASE_URL"] = settings.database_url
    if settings.workspace_root:
        env[WORKSPACE_ROOT_VARIABLE] = str(settings.workspace_root)
    if local_cli:
        env[LOCAL_CLI_VARIABLE] = "1"
    return env


def ensure_metadata_db(settings: Settings) -> dict[str, str]:
    """Create the embedded Airflow metadata database once; returns the environment the local CLI runs Airflow
    with."""
    env = airflow_env(settings, local_cli=True)
    marker = settings.home / "airflow" / ".migrated"
    marker.parent.mkdir(parents=True, exist_ok=True)
    with open(marker.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # runs started together migrate once; the others wait for it
        _migrate_once(marker, env)
    return env


def _migrate_once(marker: Path, env: dict[str, str]) -> None:
    if not marker.exists():
        proc = subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"], env=env, capture_output=True,
                              text=True, timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"could not create Airflow's metadata database: {proc.stderr[-1500:]}")
        marker.touch()


# Parsing for this DAG alone, as a worker does, builds just its pipeline: the run's own parse and dag.test()'s
# re-parse of the DAGs folder each read one spec file (``pipeline_shards``). The run ends with its CLI (``watch``).
_RUN_DAG = """
import json, os, runpy, shutil, sys
from pathlib import Path
from airflow.sdk.definitions._internal.dag_parsing_context import _airflow_parsing_context_manager
from dagsmith.airflow.watch import end_with_parent
from dagsmith.scratch import SCRATCH_VARIABLE, remove_root
end_with_parent(int(sys.argv[4]))
try:
    with _airflow_parsing_context_manager(dag_id=sys.argv[2]):
        dag = runpy.run_path(sys.argv[1])[sys.argv[2]]
        run = dag.test(run_conf=json.loads(sys.argv[3]))
    print("DAGSMITH_RESULT " + json.dumps({"state": str(run.state), "run_id": run.run_id}))
finally:
    shutil.rmtree(os.environ["AIRFLOW_HOME"], ignore_errors=True)  # the run's own metadata: done with it
    remove_root(Path(os.environ[SCRATCH_VARIABLE]))
"""


def _private_home(settings: Settings, env: dict[str, str]) -> dict[str, str]:
    """A copy of the migrated metadata database for one run. Runs started together would otherwise race on one
    SQLite file (each ``dag.test()`` registers the DAG: "UNIQUE constraint failed: dag.dag_id"); the run's
    record lives in dagsmith's store, so its Airflow metadata is disposable."""
    template = Path(env["AIRFLOW_HOME"])
    home = template / "runs" / f"{datetime.now(UTC):%Y%m%dT%H%M%S%f}-{os.getpid()}-{secrets.token_hex(3)}"
    home.mkdir(parents=True)
    shutil.copy2(template / "airflow.db", home / "airflow.db")
    return {**env, "AIRFLOW_HOME": str(home)}


class DagTest(subprocess.Popen):
    """The child process running one pipeline's ``dag.test()``; it stops the run when ``stop`` is called or when
    this process dies (``watch``)."""

    def __init__(self, args: list[str], *, pipe: tuple[int, int], lock_fd: int, **options) -> None:
        super().__init__([*args, str(pipe[0])], pass_fds=(pipe[0], lock_fd), **options)
        self._stop_end = os.fdopen(pipe[1], "wb", buffering=0)  # closed with this object: the run then stops

    def stop(self) -> None:
        """Ask the run to stop: it records itself interrupted, cleans up and exits (wait for it)."""
        if not self._stop_end.closed:
            with contextlib.suppress(BrokenPipeError):  # it ended meanwhile
                self._stop_end.write(watch.STOP)
            self._stop_end.close()


def start_dag_test(pipeline_id: int, conf: dict, settings: Settings, output: IO[str],
                   execution_id: int | None = None) -> DagTest:
    """Run a pipeline's DAG once with ``dag.test()`` in a child process writing its log to ``output``; with
    ``execution_id``, the run carries on the execution the caller recorded instead of starting its own. The run
    stages its steps' files under a scratch root of its own, and ends when this process does."""
    env = _private_home(settings, ensure_metadata_db(settings))
    if execution_id is not None:
        env[EXECUTION_VARIABLE] = str(execution_id)
    scratch.sweep(settings.home)  # the roots of runs killed with their CLI
    root = scratch.new_root(settings.home)
    env[scratch.SCRATCH_VARIABLE] = str(root.folder)
    pipe = os.pipe()
    try:
        return DagTest(
            [sys.executable, "-c", _RUN_DAG, str(DAGS_FOLDER / dag_file_name(pipeline_id)), dag_id(pipeline_id),
             json.dumps(conf)],
            pipe=pipe, lock_fd=root.lock_fd, env=env, stdout=output, stderr=subprocess.STDOUT, text=True,
        )
    except BaseException:
        os.close(pipe[1])
        scratch.remove_root(root.folder)
        raise
    finally:
        os.close(pipe[0])
        os.close(root.lock_fd)  # the run holds the root's lock from here on


def dag_test_result(log_file: Path) -> dict | None:
    for line in reversed(log_file.read_text(encoding="utf-8", errors="replace").splitlines()):
        if line.startswith("DAGSMITH_RESULT "):
            return json.loads(line.removeprefix("DAGSMITH_RESULT "))
    return None
