"""What the deployment tests share: a deployment started for a module's tests, the ``dagsmith`` command as a person
runs it, and what a process listens on."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from dagsmith.airflow.serve import LocalDeployment, free_port
from dagsmith.config import Settings
from dagsmith.store.databases import scratch_database


@contextlib.contextmanager
def serving(store: Settings, server_home: Path, home: Path, env: dict[str, str] | None = None,
            **options) -> Iterator[LocalDeployment]:
    """A running deployment on ``home`` with ``store``'s database, its Airflow metadata in a scratch database of the
    embedded server, ``env`` set while it runs, the local runtime and DAGs found within 5 s."""
    with (pytest.MonkeyPatch.context() as patched,
          scratch_database(Settings(home=server_home, database_url=None)) as metadata):
        for name, value in (env or {}).items():
            patched.setenv(name, value)
        served = LocalDeployment(Settings(home=home, database_url=store.database_url), port=free_port(),
                                 runtime="local", metadata_url=metadata.database_url, refresh_seconds=5, **options)
        with served:
            yield served


def service_logs(deployment: LocalDeployment) -> str:
    """The tail of every service's log, for a failed assertion's message."""
    return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}"
                     for p in sorted(deployment.logs.glob("*.log")))


def _variables(home: Path, database_url: str | None, env: dict[str, str]) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("DAGSMITH_AIRFLOW_")}, "COLUMNS": "200",
            "DAGSMITH_HOME": str(home), **({"DAGSMITH_DATABASE_URL": database_url} if database_url else {}), **env}


def dagsmith(*args: str, home: Path, database_url: str | None = None, **env: str) -> subprocess.CompletedProcess:
    """The ``dagsmith`` command as a person runs it, on ``home`` (and the store at ``database_url``)."""
    return subprocess.run([sys.executable, "-m", "dagsmith.cli.app", *args], capture_output=True, text=True,
                          env=_variables(home, database_url, env), timeout=600)


def dagsmith_started(*args: str, output: Path, home: Path, database_url: str | None = None,
                     **env: str) -> subprocess.Popen:
    """The ``dagsmith`` command started and left running, its output (both streams) going to ``output``."""
    with open(output, "w", encoding="utf-8") as written:
        return subprocess.Popen([sys.executable, "-m", "dagsmith.cli.app", *args], stdout=written,
                                stderr=subprocess.STDOUT, text=True, env=_variables(home, database_url, env))


def listening(pid: int) -> set[tuple[str, int]]:
    """The addresses a process and its descendants listen on."""
    processes = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    found = set()
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            found |= {(c.laddr.ip, c.laddr.port) for c in process.net_connections(kind="inet")
                      if c.status == psutil.CONN_LISTEN}
    return found
