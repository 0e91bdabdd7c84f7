"""The meta-DAG's agents run as Airflow tasks (dag.test) against the real store and catalog."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sqlalchemy import select

from dagsmith import datasets
from dagsmith.airflow.local import DAGS_FOLDER, airflow_env
from dagsmith.store import schema
from dagsmith.store.db import session_scope

RUN_DAG = """
import json, runpy, sys
dag = runpy.run_path(sys.argv[1])[sys.argv[2]]
run = dag.test(run_conf=json.loads(sys.argv[3]), mark_success_pattern="^execute$")
print("RESULT " + json.dumps({"state": str(run.state)}))
"""


def run_dag(settings, conf: dict, *, local_cli: bool = False, dag_file: str = "dagsmith_build_pipeline.py",
            name: str = "dag") -> tuple[str, str]:
    """Run a DAG of ``dag_file`` with ``dag.test()`` as a deployment's worker runs it, or with ``local_cli`` as the
    local CLI does (the meta-DAG's ``execute`` marked done). Returns the run's state and its output."""
    env = airflow_env(settings, local_cli=local_cli)
    migrate = subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"], env=env, capture_output=True,
                             text=True, timeout=300)
    assert migrate.returncode == 0, migrate.stderr[-2000:]
    proc = subprocess.run([sys.executable, "-c", RUN_DAG, str(DAGS_FOLDER / dag_file), name, json.dumps(conf)],
                          env=env, capture_output=True, text=True, timeout=900)
    output = proc.stdout + proc.stderr
    assert "RESULT " in proc.stdout, output[-4000:]
    return json.loads(proc.stdout.split("RESULT ", 1)[1].splitlines()[0])["state"], output


def penguins_in(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "penguins.csv"
    datasets.load("penguins").to_csv(data, index=False)
    return data


def test_agents_run_as_tasks_and_store_a_scheduled_pipeline(catalog_settings, tmp_path):
    data = penguins_in(catalog_settings.home / "datasets" / tmp_path.name)  # a deployment reads the data roots only
    state, output = run_dag(catalog_settings, {"dataset": str(data), "goal": "predict the species", "user": "ana",
                                               "schedule": "0 3 * * 1"})
    assert state == "success", output[-4000:]
    with session_scope(catalog_settings) as session:
        pipeline = session.scalars(select(schema.Pipeline).where(schema.Pipeline.owner == "ana")
                                   .order_by(schema.Pipeline.id.desc())).first()
        assert (pipeline.task_type, pipeline.target, pipeline.status) == ("multiclass_classification", "species",
                                                                         "ready")
    spec = json.loads((catalog_settings.home / "pipelines" / f"{pipeline.id}.pipeline.json").read_text())
    assert spec["schedule"] == "0 3 * * 1" and spec["steps"]


def test_every_task_accepts_the_conf_the_trigger_form_sends(tmp_path):
    """The UI's trigger form sends every param, the optional ones left empty as null; each task merges them with its
    own params and validates at start (Airflow's process_params), so a task param must accept what the run holds."""
    from airflow.sdk.definitions.param import process_params

    from dagsmith.airflow.meta_dag import build

    dag = build()
    form = {**dag.params.dump(), "dataset": str(tmp_path / "penguins.csv"), "goal": "predict the species",
            "interactive": True}
    assert form["choices"] is None and form["schedule"] is None
    for task in dag.tasks:
        assert process_params(dag, task, form, suppress_exception=False)["goal"] == "predict the species", task.task_id


def test_a_bad_goal_fails_the_intent_task_with_its_question(catalog_settings, tmp_path):
    data = penguins_in(catalog_settings.home / "datasets" / tmp_path.name)
    state, output = run_dag(catalog_settings, {"dataset": str(data), "goal": "asdf qwerty"})
    assert state == "failed"
    assert "I could not tell what you want from 'asdf qwerty'. Do you want to predict a column" in output
