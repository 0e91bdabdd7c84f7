"""The meta-DAG's agents run as Airflow tasks (dag.test) against the real store and catalog."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sqlalchemy import select

from dagsmith import datasets
from dagsmith.agents.planner import recommend_stages
from dagsmith.agents.profiler import profile_dataset
from dagsmith.agents.intent.understanding import understand_targets
from dagsmith.airflow.local import DAGS_FOLDER, airflow_env
from dagsmith.execution.specs import SPEC_SUFFIX, read_spec, specs_dir
from dagsmith.models.catalog import Stage
from dagsmith.models.plan import DagSpec
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from tests.agents.test_each_target import houses

RUN_DAG = """
import json, runpy, sys
dag = runpy.run_path(sys.argv[1])[sys.argv[2]]
run = dag.test(run_conf=json.loads(sys.argv[3]), mark_success_pattern="^execute")
print("RESULT " + json.dumps({"state": str(run.state)}))
"""


def run_dag(settings, conf: dict, *, local_cli: bool = False, dag_file: str = "dagsmith_build_pipeline.py",
            name: str = "dagsmith_build_pipeline") -> tuple[str, str]:
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
    """The conf's fields (``target``, ``metric``, ``exclude``) win over the goal's words, as on the CLI."""
    data = penguins_in(catalog_settings.home / "datasets" / tmp_path.name)  # a deployment reads the data roots only
    # words of this test's own: fields given with a goal are remembered for its words on this table
    state, output = run_dag(catalog_settings, {"dataset": str(data), "goal": "predict the species of each bird",
                                               "on_behalf_of": "ana", "schedule": "0 3 * * 1", "target": "sex",
                                               "metric": "f1", "exclude": ["island"]})
    assert state == "success", output[-4000:]
    with session_scope(catalog_settings) as session:
        pipeline = session.scalars(select(schema.Pipeline).where(schema.Pipeline.owner == "ana")
                                   .order_by(schema.Pipeline.id.desc())).first()
        assert (pipeline.task_type, pipeline.target, pipeline.status) == ("binary_classification", "sex", "ready")
    spec = json.loads((catalog_settings.home / "pipelines" / f"{pipeline.id}.pipeline.json").read_text())
    assert spec["schedule"] == "0 3 * * 1" and spec["steps"]
    assert next(s for s in spec["steps"] if s["stage"] == "modelling")["search"]["metric"] == "f1"


def test_every_task_accepts_the_conf_the_trigger_form_sends(tmp_path):
    """The UI's trigger form sends every param, the optional ones left empty as null; each task merges them with its
    own params and validates at start (Airflow's process_params), so a task param must accept what the run holds."""
    from airflow.sdk.definitions.param import process_params

    from dagsmith.airflow.meta_dag import build

    dag = build()
    form = {**dag.params.dump(), "dataset": str(tmp_path / "penguins.csv"), "goal": "predict the species",
            "interactive": True, "task": "multiclass_classification", "exclude": ["island"], "time_budget": 60,
            "horizon": "12 months"}
    assert form["choices"] is None and form["schedule"] is None and form["target"] is None
    for task in dag.tasks:
        assert process_params(dag, task, form, suppress_exception=False)["goal"] == "predict the species", task.task_id


def test_a_bad_goal_fails_the_plan_task_with_its_question(catalog_settings, tmp_path):
    data = penguins_in(catalog_settings.home / "datasets" / tmp_path.name)
    state, output = run_dag(catalog_settings, {"dataset": str(data), "goal": "asdf qwerty"})
    assert state == "failed"
    assert "I could not tell what you want from 'asdf qwerty'. Do you want to predict a column" in output


def houses_in(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "houses.csv"
    houses().to_csv(data, index=False)
    return data


def built_by(settings, owner: str) -> dict[str, DagSpec]:
    """The specs of the pipelines ``owner`` has, by target."""
    with session_scope(settings) as session:
        pipelines = session.scalars(select(schema.Pipeline).where(schema.Pipeline.owner == owner)).all()
        assert all(p.status == "ready" for p in pipelines)
        return {p.target: read_spec(specs_dir(settings) / f"{p.id}{SPEC_SUFFIX}") for p in pipelines}


def test_a_goal_asking_for_a_model_of_each_target_builds_and_runs_one_pipeline_per_target(catalog_settings, tmp_path):
    data = houses_in(catalog_settings.home / "datasets" / tmp_path.name)
    state, output = run_dag(catalog_settings, {"dataset": str(data), "goal": "predict both price and rooms",
                                               "on_behalf_of": "both"})
    assert state == "success", output[-4000:]
    built = built_by(catalog_settings, "both")
    assert sorted(built) == ["price", "rooms"]
    # execute is mapped over the built pipelines: one trigger of each pipeline's own DAG
    assert output.count("Marking success for <Mapped(TriggerDagRunOperator): execute>") == 2, output[-4000:]


def test_a_target_whose_pipeline_cannot_be_built_leaves_no_pipeline_of_the_others(catalog_settings, tmp_path):
    """Price's pipeline builds; rooms' choice names a service its ranking does not offer: the run fails with that
    reason, and price's pipeline is not left stored beside nothing."""
    data = houses_in(catalog_settings.home / "datasets" / tmp_path.name)
    state, output = run_dag(catalog_settings, {"dataset": str(data), "goal": "predict both price and rooms",
                                               "on_behalf_of": "half", "choices": "rooms: modelling=kmeans_clustering"})
    assert state == "failed" and "'kmeans_clustering' is not a candidate for modelling" in output, output[-4000:]
    assert not built_by(catalog_settings, "half")


def test_several_targets_are_the_plan_task_question_or_one_pipeline_each_with_choices_aimed_at_one(
        catalog_settings, embedder, tmp_path):
    data = houses_in(catalog_settings.home / "datasets" / tmp_path.name)
    goal = "predict the price and also the number of rooms"
    state, output = run_dag(catalog_settings, {"dataset": str(data), "goal": goal, "on_behalf_of": "asked-two-targets"})
    assert state == "failed"
    assert "The goal names 2 columns to predict: 'price' and 'rooms'." in output
    assert "Or trigger the run with each_target set to build one pipeline per target." in output
    assert not built_by(catalog_settings, "asked-two-targets")

    profile = profile_dataset(data)
    [price, rooms] = understand_targets(goal, profile, each_target=True)
    ranked = recommend_stages(profile, rooms, settings=catalog_settings, embedder=embedder)
    second = next(s for s in ranked.stages if s.stage is Stage.MODELLING).candidates[1].microservice
    state, output = run_dag(catalog_settings, {"dataset": str(data), "goal": goal, "on_behalf_of": "each",
                                               "each_target": True,
                                               "choices": f"rooms: modelling={second}"})
    assert state == "success", output[-4000:]
    built = built_by(catalog_settings, "each")
    modelling = {target: next(s for s in spec.steps if s.stage == "modelling") for target, spec in built.items()}
    assert modelling["rooms"].search.candidates == [second]  # a chosen model is tuned alone
    assert len(modelling["price"].search.candidates) > 1  # the choice aimed at rooms leaves price's model search be
