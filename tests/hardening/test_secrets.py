"""Secrets planted as canaries (an API key, a cloud secret, a token, a database password) never show up where
people or other code can read them: the command line's output, Airflow's log of the run, every row of the store,
workspaces, bundles and spec files, a service's environment and errors, the prompts sent to a model, error
messages about the database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from sqlalchemy import inspect, select, text
from sqlalchemy.engine import make_url

from dagsmith import datasets
from dagsmith.catalog.upload import add
from dagsmith.store import schema
from dagsmith.store.db import database_url, get_engine, session_scope
from tests.conftest import ROOT
from tests.reasoning.chat_server import Reply, chat_server

CANARIES = {"OPENAI_API_KEY": "sk-canary-3f9a1c77e0", "AWS_SECRET_ACCESS_KEY": "canary-aws-8b2d51",
            "DAGSMITH_TEST_TOKEN": "canary-token-6e41"}
DB_PASSWORD = "canary-db-pw-4d07"


def _leaks(blob: str) -> list[str]:
    return [value for value in [*CANARIES.values(), DB_PASSWORD] if value in blob]


def _store_text(settings) -> str:
    """Every row of every table of the store, as text."""
    engine = get_engine(settings)
    with engine.connect() as connection:
        tables = inspect(connection).get_table_names()
        return "\n".join(str(row) for table in tables
                         for row in connection.execute(text(f'SELECT * FROM "{table}"')))


def _files_text(root: Path) -> str:
    return "\n".join(path.read_bytes().decode("utf-8", errors="replace") for path in root.rglob("*") if path.is_file())


#: The edits that make the faulty scaler needing ``columns``, when none are named, print the whole environment it was
#: given into its error: (text of its source, what replaces it).
ENV_REPORTING = [("\nfrom sklearn", "\nimport os\n\nfrom sklearn"),
                 ('    columns = params["columns"]\n',
                  ('    if "columns" not in params:\n'
                   '        raise KeyError(f"no columns named; the configuration seen: {dict(os.environ)}")\n'
                   '    columns = params["columns"]\n'))]


def _env_reporting_scaler(folder: Path) -> Path:
    folder.mkdir()
    model = ROOT / "tests" / "data" / "faulty" / "scaler_needing_columns"
    source = (model / "main.py").read_text(encoding="utf-8")
    for old, new in ENV_REPORTING:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    (folder / "main.py").write_text(source, encoding="utf-8")
    (folder / "requirements.txt").write_text((model / "requirements.txt").read_text(), encoding="utf-8")
    (folder / "manifest.yaml").write_text((model / "manifest.yaml").read_text().replace(
        "scaler_needing_columns", folder.name), encoding="utf-8")
    return folder


def _scale_first_with(settings, pipeline_id: int, service: str) -> None:
    """Make the pipeline's scaling step try ``service`` first, its planned choice next."""
    with session_scope(settings) as session:
        step = session.scalar(select(schema.PipelineStep).where(schema.PipelineStep.pipeline_id == pipeline_id,
                                                                schema.PipelineStep.stage == "scaling"))
        faulty = session.scalar(select(schema.Microservice).where(schema.Microservice.name == service))
        planned = session.get(schema.Microservice, step.microservice_id)
        step.alternatives = [{"id": planned.id, "name": planned.name}]
        step.microservice_id, step.params = faulty.id, {}


def _dagsmith(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dagsmith.cli.app", *args], capture_output=True, text=True,
                          env=env, timeout=900)


def test_a_run_keeps_planted_secrets_out_of_output_logs_store_files_and_prompts(store, embedder, tmp_path):
    data = tmp_path / "tumours.csv"
    datasets.load("breast_cancer").drop(columns=["diagnosis"]).to_csv(data, index=False)
    uploaded = add(_env_reporting_scaler(tmp_path / "env_reporting_scaler"), store, embedder)
    assert uploaded.outcome != "rejected", uploaded.findings
    url = make_url(database_url(store)).set(password=DB_PASSWORD).render_as_string(hide_password=False)
    with chat_server(Reply("not an answer")) as model:  # a configured model, every answer unusable: rules decide
        env = {**os.environ, **CANARIES, "DAGSMITH_DATABASE_URL": url, "DAGSMITH_HOME": str(store.home),
               "DAGSMITH_REASONER": "openai", "DAGSMITH_LLM_MODEL": "scripted", "OPENAI_BASE_URL": model.url,
               "DAGSMITH_LLM_MAX_RETRIES": "0"}
        planned = _dagsmith(env, "plan", str(data), "group the tumours into clusters", "--json")
        assert planned.returncode == 0, planned.stderr
        pipeline_id = json.loads(planned.stdout)["pipeline"]["id"]
        _scale_first_with(store, pipeline_id, "env_reporting_scaler")
        ran = _dagsmith(env, "pipelines", "rerun", str(pipeline_id))
    assert ran.returncode == 0, ran.stdout + ran.stderr

    with session_scope(store) as session:  # the failing step did print its whole environment into its error
        dumped = session.scalar(select(schema.StepAttempt.error_text).where(
            schema.StepAttempt.error_text.contains("the configuration seen:")))
    assert dumped and "'PATH':" in dumped
    prompts = [json.dumps(request["body"]) for request in model.requests]
    assert any("the configuration seen:" in prompt for prompt in prompts)  # and so did the healing question
    assert all(request["headers"]["authorization"] == f"Bearer {CANARIES['OPENAI_API_KEY']}"
               for request in model.requests)  # the key is sent where it belongs, and only there
    assert not _leaks("\n".join(prompts))
    assert not _leaks(planned.stdout + planned.stderr + ran.stdout + ran.stderr)
    assert not _leaks(_store_text(store))
    airflow_logs = list((store.home / "logs").glob("pipeline-*.log"))
    assert airflow_logs and "task_id=finish" in airflow_logs[0].read_text()  # the run's task logs, to its end, too
    assert not _leaks(_files_text(store.home))  # Airflow's log of the run, workspaces, bundles, specs, the LLM cache


def test_a_database_password_stays_out_of_error_messages(tmp_path):
    url = "postgresql://dagsmith:canary-db-pw-91c3@127.0.0.1:9/dagsmith"
    env = {**os.environ, "DAGSMITH_DATABASE_URL": url, "DAGSMITH_HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "dagsmith.cli.app", "catalog", "list"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 3 and "cannot reach the database" in proc.stderr, proc.stderr
    assert "canary-db-pw-91c3" not in proc.stdout + proc.stderr and "Traceback" not in proc.stderr
    assert "***" in proc.stderr  # the URL is shown, its password masked

