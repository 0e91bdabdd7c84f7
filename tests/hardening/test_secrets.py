"""Secrets planted as canaries (an API key, a cloud secret, a database password) never show up where people or
other code can read them: a run's store rows, workspace, bundles, logs and spec files, a service's environment,
error messages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from sqlalchemy import inspect, text

from dagsmith.agents.planner import plan
from dagsmith.execution.driver import run_pipeline
from dagsmith.execution.specs import write_spec
from dagsmith.runtime import runtime_named
from dagsmith.runtime.base import Invocation
from dagsmith.store.db import get_engine
from tests.conftest import ROOT

CANARIES = {"OPENAI_API_KEY": "sk-canary-3f9a1c77e0", "AWS_SECRET_ACCESS_KEY": "canary-aws-8b2d51",
            "DAGSMITH_TEST_TOKEN": "canary-token-6e41"}


def _leaks(blob: str) -> list[str]:
    return [value for value in CANARIES.values() if value in blob]


def _store_text(settings) -> str:
    """Every row of every table of the store, as text."""
    engine = get_engine(settings)
    with engine.connect() as connection:
        tables = inspect(connection).get_table_names()
        return "\n".join(str(row) for table in tables
                         for row in connection.execute(text(f'SELECT * FROM "{table}"')))  # noqa: S608 (names from the schema)


def _files_text(root: Path) -> str:
    return "\n".join(path.read_bytes().decode("utf-8", errors="replace") for path in root.rglob("*") if path.is_file())


def test_a_run_keeps_planted_secrets_out_of_the_store_workspace_specs_and_services(
        store, churn_csv, embedder, monkeypatch):
    for name, value in CANARIES.items():
        monkeypatch.setenv(name, value)
    planned = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder).pipeline
    runtime = runtime_named("local", store)
    outcome = run_pipeline(planned.id, str(churn_csv), runtime=runtime, settings=store, user="ana")
    assert outcome["status"] == "completed"
    write_spec(planned.id, store)

    hostile = ROOT / "tests" / "data" / "hostile" / "introspect"
    files = {p.name: p.read_text() for p in hostile.iterdir() if p.is_file()}
    seen = runtime.run(Invocation("introspect", files, Path(outcome["workspace"]) / "input",
                                  store.home / "introspect-out", {}))
    environment = json.loads(seen.stdout.strip().splitlines()[-1])["environment"]
    assert not set(CANARIES) & set(environment) and not _leaks(json.dumps(environment))

    assert not _leaks(_store_text(store))
    assert not _leaks(_files_text(store.home))  # workspaces, bundles, step logs, spec files, the service's output


def test_a_database_password_stays_out_of_error_messages(tmp_path):
    url = "postgresql://dagsmith:canary-db-pw-91c3@127.0.0.1:9/dagsmith"
    env = {**os.environ, "DAGSMITH_DATABASE_URL": url, "DAGSMITH_HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "dagsmith.cli.app", "catalog", "list"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 3 and "cannot reach the database" in proc.stderr, proc.stderr
    assert "canary-db-pw-91c3" not in proc.stdout + proc.stderr and "Traceback" not in proc.stderr
    assert "***" in proc.stderr  # the URL is shown, its password masked

