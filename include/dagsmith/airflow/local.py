"""An embedded Airflow for one machine: its home and SQLite metadata under DAGSMITH_HOME/airflow.

``dagsmith run`` uses it to run a pipeline's DAG in-process (``dag.test()``), no scheduler needed, and so does
``dagsmith bench`` for each attempt. The run's outcome comes back through Airflow: the summary its ``finish`` task
returned (XCom), which the child writes to a result file for ``DagTest.result``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from pydantic import BaseModel

from dagsmith import scratch
from dagsmith.airflow import watch
from dagsmith.airflow.pipeline_shards import dag_file_name
from dagsmith.airflow.run_child import RunOrder
from dagsmith.config import LOCAL_CLI_VARIABLE, WORKSPACE_ROOT_VARIABLE, Settings
from dagsmith.execution.specs import dag_id
from dagsmith.models.execution import RunSummary

DAGS_FOLDER = Path(__file__).resolve().parents[3] / "dags"


def airflow_env(settings: Settings, *, local_cli: bool = False) -> dict[str, str]:
    """Environment for Airflow processes that run dagsmith's DAGs against this machine's store.

    ``local_cli`` marks the local CLI's own runs (``DAGSMITH_LOCAL_CLI=1``), whose datasets may lie outside the
    data roots (``dagsmith.data.roots``). The mark lives in the process environment, which no trigger's conf
    reaches, and is set here only: an inherited one is dropped, so a deployment built on this (``dagsmith serve``)
    always confines datasets.
    """
    home = settings.home / "airflow"
    env = {
        **{name: value for name, value in os.environ.items() if name != LOCAL_CLI_VARIABLE},
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


class DagTestResult(BaseModel):
    """How a ``dag.test()`` run ended: its Airflow state and run id, and the summary its ``finish`` task returned
    (None when the run ended before ``finish`` closed it)."""

    state: str
    run_id: str
    summary: RunSummary | None


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
    """The child process running one pipeline's ``dag.test()`` (``airflow.run_child``), once ``begin`` gives it the
    pipeline; it stops the run when ``stop`` is called or when this process dies (``watch``), and leaves its outcome
    in ``result_file``."""

    def __init__(self, *, result_file: Path, pipe: tuple[int, int], lock_fd: int, **options) -> None:
        super().__init__([sys.executable, "-m", "dagsmith.airflow.run_child", str(result_file), str(pipe[0])],
                         pass_fds=(pipe[0], lock_fd), stdin=subprocess.PIPE, **options)
        self.result_file = result_file
        self._stop_end = os.fdopen(pipe[1], "wb", buffering=0)  # closed with this object: the run then stops

    def begin(self, pipeline_id: int, conf: dict) -> None:
        """Run the pipeline's DAG with ``conf`` (the child may still be getting ready: it starts when it is)."""
        order = RunOrder(dag_file=str(DAGS_FOLDER / dag_file_name(pipeline_id)), dag_id=dag_id(pipeline_id),
                         conf=conf)
        assert self.stdin is not None
        self.stdin.write(order.model_dump_json() + "\n")
        self.stdin.close()

    def stop(self) -> None:
        """Ask the run to stop: it records itself interrupted, cleans up and exits (wait for it)."""
        if not self._stop_end.closed:
            with contextlib.suppress(BrokenPipeError):  # it ended meanwhile
                self._stop_end.write(watch.STOP)
            self._stop_end.close()

    def result(self) -> DagTestResult | None:
        """Once the run has exited, how it ended; None when it did not get to say (killed, or it crashed)."""
        if not self.result_file.is_file():
            return None
        result = DagTestResult.model_validate_json(self.result_file.read_text(encoding="utf-8"))
        self.result_file.unlink()
        return result


def spawn_dag_test(settings: Settings, output: IO[str], variables: dict[str, str] | None = None) -> DagTest:
    """A child process for one ``dag.test()`` run, writing its log to ``output``, that gets Airflow ready while the
    caller decides what it runs (``DagTest.begin``; ``DagTest.stop`` when nothing); with ``variables``, its
    environment has them too. Its ``start`` task records the execution, announced by a ``started`` run event from
    the child's pid (``store.events``): dag.test() runs its tasks in its own process. The run stages its steps'
    files under a scratch root of its own, and ends when this process does."""
    env = {**_private_home(settings, ensure_metadata_db(settings)), **(variables or {})}
    scratch.sweep(scratch.run_roots(settings.home))  # the roots of runs killed with their CLI
    root = scratch.new_root(scratch.run_roots(settings.home))
    env[scratch.SCRATCH_VARIABLE] = str(root.folder)
    pipe = os.pipe()
    try:
        return DagTest(result_file=Path(env["AIRFLOW_HOME"]).with_suffix(".json"), pipe=pipe, lock_fd=root.lock_fd,
                       env=env, stdout=output, stderr=subprocess.STDOUT, text=True)
    except BaseException:
        os.close(pipe[1])
        scratch.remove_root(root.folder)
        raise
    finally:
        os.close(pipe[0])
        os.close(root.lock_fd)  # the run holds the root's lock from here on


def start_dag_test(pipeline_id: int, conf: dict, settings: Settings, output: IO[str],
                   variables: dict[str, str] | None = None) -> DagTest:
    """Run a pipeline's DAG once with ``dag.test()`` in a child process (``spawn_dag_test``) with ``conf``."""
    process = spawn_dag_test(settings, output, variables)
    process.begin(pipeline_id, conf)
    return process
