"""dagsmith deployed on a real Airflow (api-server, scheduler, dag-processor, triggerer), driven as an upstream
system drives its REST API and as a person uses its UI (headless Chromium, screenshots in test-artifacts/): a JWT
from /auth/token, the meta-DAG triggered through the REST API with a dataset and a goal, a person's choice among the
top 3 per stage in the UI's human-in-the-loop form, the built pipeline's DAG registered (its docs explaining every
choice) and run, re-triggered with a new dataset (its model and predictions emitted as assets), new rows scored by
its scoring DAG through the REST API, run by its schedule, and triggered from the UI's form; a pipeline retrained
when an upstream system updates its dataset's asset; triggers naming a dataset outside the data roots refused at
once; and `dagsmith run` submitting to the deployment and following the run there."""

from __future__ import annotations

import ipaddress
import json
import os
import re
import socket
import subprocess
from urllib.parse import urlencode

import pandas as pd
import psutil
import pytest
from sqlalchemy import select

from dagsmith import datasets
from dagsmith.agents.planner import plan
from dagsmith.agents.profiler import profile_dataset
from dagsmith.airflow.rest import LoginRefused
from dagsmith.airflow.serve import STATE_FILE, LocalDeployment, free_port
from dagsmith.cli.submit import PASSWORD_VARIABLE, URL_VARIABLE, find_deployment
from dagsmith.config import Settings
from dagsmith.errors import InputError
from dagsmith.execution.specs import dag_id, score_dag_id, write_spec
from dagsmith.learning.answers import recall
from dagsmith.models.plan import ON_NEW_DATA
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from tests.agents.test_each_target import houses
from tests.deploy.airflow_api import FINISHED, Api
from tests.deploy.browser import airflow_ui
from tests.deploy.serving import dagsmith as _dagsmith
from tests.deploy.serving import dagsmith_started as _dagsmith_started
from tests.deploy.serving import listening, serving
from tests.deploy.serving import service_logs as _logs
from tests.waiting import wait_until

META_DAG = "dagsmith_build_pipeline"
#: Written into a file outside the data roots: no refusal may quote it.
CANARY = "canary_91d4c7"


#: How long the deployment's interactive runs wait for a person before building the top-ranked services.
CHOICE_TIMEOUT_SECONDS = 60


pytestmark = pytest.mark.xdist_group("local-deployment")  # one deployment for the module's tests


@pytest.fixture(scope="module")
def deployment(catalog_settings, server_home, tmp_path_factory):
    with serving(catalog_settings, server_home, tmp_path_factory.mktemp("deployment") / "home",
                 {"DAGSMITH_CHOICE_TIMEOUT_SECONDS": str(CHOICE_TIMEOUT_SECONDS)}) as served:
        yield served


def _built(settings: Settings, owner: str) -> tuple[int, str]:
    """The owner's pipeline and the model its modelling step runs."""
    with session_scope(settings) as session:
        pipeline_id = session.scalars(select(schema.Pipeline.id).where(schema.Pipeline.owner == owner)).one()
        model = session.scalar(select(schema.Microservice.name).join(
            schema.PipelineStep, schema.PipelineStep.microservice_id == schema.Microservice.id).where(
            schema.PipelineStep.pipeline_id == pipeline_id, schema.PipelineStep.stage == "modelling"))
    return pipeline_id, model


def _parked(deployment: LocalDeployment, dag: str, run_id: str, task: str) -> bool:
    """Whether the scheduler has seen the try that asked a person exit. Airflow 3.3 races an answer given before
    then: it resumes the task, then reads that exit as a change made behind its back and fails the task. A person
    takes longer than that; a script answering at once must wait for it too."""
    key = f"dag_id='{dag}', task_id='{task}', run_id='{run_id}'"
    log = (deployment.logs / "scheduler.log").read_text(encoding="utf-8", errors="replace")
    return any("Received executor event" in line and key in line for line in log.splitlines())


def _ranked(markdown: str, stage: str, rank: int) -> str:
    """The microservice ranked ``rank`` for ``stage`` among the top 3 a form or page shows after ``stage``
    (as markdown, or as the rendered page's text, where list numbers are not text)."""
    section = markdown.split(stage, 1)[1]
    return re.findall(r"^(?:\d\.\s*)?`?(\w+)`?\s+[\d.]+: keyword", section, re.M)[rank - 1]


def test_an_upstream_system_and_a_person_build_run_rerun_and_schedule_a_pipeline(deployment, catalog_settings,
                                                                                   tmp_path):
    penguins = datasets.load("penguins")
    folder = deployment.settings.home / "datasets"  # a deployment reads datasets from its data roots only
    folder.mkdir(parents=True, exist_ok=True)
    first, second = folder / "penguins.csv", folder / "penguins-2008.csv"
    penguins.to_csv(first, index=False)
    penguins[penguins["year"] == 2008].to_csv(second, index=False)
    login = deployment.login()
    with pytest.raises(LoginRefused) as refused:
        Api(deployment.url, login.user, "not-the-password")
    assert refused.value.status == 401
    api = Api(deployment.url, login.user, login.password)

    fed_by_data = api.trigger(META_DAG, {"dataset": str(first), "goal": "predict the body mass in grams",
                                         "on_behalf_of": "feeds", "schedule": ON_NEW_DATA})
    with airflow_ui(deployment.url, "local_deployment") as ui:
        ui.login(login.user, login.password)
        # A person triggers from the UI's form, whose params are documented, and then does not answer: after the
        # timeout the top-ranked services are built (at the end; the timeout runs meanwhile).
        form, unanswered = ui.trigger(META_DAG, {"dataset": str(second), "goal": "predict the species",
                                                 "on_behalf_of": "nobody"}, switches=("interactive",))
        assert "What you want, e.g." in form and "Let a person choose among the top 3" in form, form
        run = api.trigger(META_DAG, {"dataset": str(first), "goal": "predict the species",
                                     "on_behalf_of": "upstream",
                                     "schedule": "* * * * *", "interactive": True})
        top = _ranked(api.question(META_DAG, unanswered, "choose")["body"], "**modelling**", 1)
        # A person picks the second-ranked model among the top 3 the UI's form shows with their reasons.
        asked = api.question(META_DAG, run, "choose")["body"]
        wait_until(lambda: _parked(deployment, META_DAG, run, "choose"), timeout=120,
                   what="the scheduler to see the asking try park")
        picked = _ranked(asked, "**modelling**", 2)
        shown = ui.answer(META_DAG, run, "choose", "choices", f"modelling={picked}")
        assert _ranked(shown, "\nmodelling\n", 2) == picked and "One STAGE=MICROSERVICE per line" in shown
        assert api.wait(META_DAG, run) == "success", _logs(deployment)
        pipeline_id, chosen = _built(catalog_settings, "upstream")
        assert chosen == picked
        child = dag_id(pipeline_id)
        registered = api.call("GET", f"/api/v2/dags/{child}")
        assert registered["is_paused"] is False and registered["timetable_summary"] == "* * * * *"
        grid = ui.task_names(child)  # tasks named by stage and microservice
        assert re.search(rf"step_\d+_modelling__{picked[:10]}", grid), grid
        docs = ui.dag_docs(child)  # the DAG's docs explain every choice: the top 3 with their score breakdown
        assert "multiclass_classification of species" in docs and f"modelling: {picked}" in docs
        assert _ranked(docs, f"modelling: {picked}", 3) and "semantic" in docs.split(f"modelling: {picked}")[1]
        runs = api.runs(child)
        assert any(r["run_type"] == "operator_triggered" and r["state"] == "success" for r in runs), [  # the meta-DAG's
            (r["dag_run_id"], r["run_type"], r["state"]) for r in runs]

        rerun = api.trigger(child, {"dataset": str(second), "user": "upstream"})
        assert api.wait(child, rerun) == "success", _logs(deployment)
        with session_scope(catalog_settings) as session:
            executions = session.scalars(select(schema.Execution).where(schema.Execution.pipeline_id == pipeline_id))
            assert {e.dataset for e in executions} >= {str(first), str(second)}

        # The schedule runs it every minute: the first scheduled run is seen through, then the schedule paused, as
        # every further run would only compete with the rest of the scenario and the other tests.
        scheduled = wait_until(
            lambda: next((r for r in api.runs(child) if r["run_type"] == "scheduled" and r["state"] in FINISHED),
                         None),
            timeout=300, what=lambda: f"a scheduled run to finish: {api.runs(child)}\n{_logs(deployment)}")
        assert scheduled["state"] == "success", _logs(deployment)
        api.pause(child)

        # Every completed run tells Airflow what it produced: the model and predictions assets, with their run.
        query = urlencode({"source_dag_id": child, "source_run_id": rerun})
        produced = api.call("GET", f"/api/v2/assets/events?{query}")
        extras = {e["uri"]: e["extra"] for e in produced["asset_events"]}
        assert extras[f"dagsmith://pipelines/{pipeline_id}/model"]["dataset"] == str(second), produced
        assert f"dagsmith://pipelines/{pipeline_id}/predictions" in extras

        # An upstream system scores rows through the REST API with the pipeline's scoring DAG: its first version in
        # the sandbox, the predictions written beside the rows and announced as an asset; rows like the training's
        # leave the retrain untriggered.
        scoring = score_dag_id(pipeline_id)
        scored = api.trigger(scoring, {"dataset": str(first), "version": 1})
        assert api.wait(scoring, scored) == "success", _logs(deployment)
        assert api.task_instances(scoring, scored)["retrain_on_drift"]["state"] == "skipped"
        predictions = pd.read_csv(folder / "penguins.predictions.csv")
        assert len(predictions) == len(penguins) and set(predictions["prediction"]) <= set(penguins["species"])
        query = urlencode({"source_dag_id": scoring, "source_run_id": scored})
        [event] = api.call("GET", f"/api/v2/assets/events?{query}")["asset_events"]
        assert event["uri"] == f"dagsmith://pipelines/{pipeline_id}/scored" and event["extra"]["version"] == 1

        # An upstream system tells Airflow the dataset changed, naming the newer file: the pipeline built to retrain
        # on new data runs on it.
        assert api.wait(META_DAG, fed_by_data) == "success", _logs(deployment)
        states = {task: ti["state"] for task, ti in api.task_instances(META_DAG, fed_by_data).items()}
        assert states["plan"] == states["execute"] == "success", states  # a clear goal: planned in one task
        assert {states[t] for t in ("ask", "understood", "recommend", "build", "execute_built")} == {"skipped"}, states
        fed = dag_id(_built(catalog_settings, "feeds")[0])
        assert api.call("GET", f"/api/v2/dags/{fed}")["timetable_summary"] == "Asset"
        asset = wait_until(lambda: next((a for a in api.call("GET", "/api/v2/assets?limit=100")["assets"]
                                         if a["uri"] == first.as_uri()), None),
                           timeout=60, what="the dag-processor to register the dataset's asset")
        api.call("POST", "/api/v2/assets/events", {"asset_id": asset["id"], "extra": {"dataset": str(second)}})
        retrained = wait_until(
            lambda: next((r for r in api.runs(fed) if r["run_type"] == "asset_triggered" and r["state"] in FINISHED),
                         None),
            timeout=300, what=lambda: f"a run on new data to finish: {api.runs(fed)}\n{_logs(deployment)}")
        assert retrained["state"] == "success", _logs(deployment)
        with session_scope(catalog_settings) as session:
            latest = session.scalars(select(schema.Execution).where(schema.Execution.airflow_run_id
                                                                    == retrained["dag_run_id"])).one()
            assert latest.dataset == str(second) and latest.status == "completed"

    assert api.wait(META_DAG, unanswered) == "success", _logs(deployment)
    assert _built(catalog_settings, "nobody")[1] == top


def test_an_unclear_goal_is_asked_in_airflow_and_the_answer_is_built_and_remembered(deployment, catalog_settings,
                                                                                    tmp_path):
    """The meta-DAG asks instead of failing: its likeliest readings are the options of a human-in-the-loop form.
    `dagsmith run` on the deployment says what it waits for and where to answer; answered here through the REST
    API, the run builds the chosen reading, the command reports it, and the answer is remembered for those words."""
    penguins = datasets.load("penguins")
    folder = deployment.settings.home / "datasets"
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "penguins-bills.csv"
    penguins.to_csv(data, index=False)
    login = deployment.login()
    api = Api(deployment.url, login.user, login.password)
    output = tmp_path / "run.out"
    command = _dagsmith_started("run", str(data), "predict the bill", "--user", "asked", output=output,
                                home=deployment.settings.home, database_url=deployment.settings.database_url)
    try:
        run = wait_until(lambda: next((r["dag_run_id"] for r in api.runs(META_DAG)
                                       if (r["conf"] or {}).get("on_behalf_of") == "asked"), None),
                         timeout=120, what=lambda: f"the command to trigger the build: {output.read_text()}")
        asked = api.question(META_DAG, run, "clarify", map_index=0)
        assert "two columns to predict: 'bill_length_mm' or 'bill_depth_mm'" in asked["body"], asked
        depth = "2. regression of bill_depth_mm"
        assert asked["options"][:2] == ["1. regression of bill_length_mm", depth] and len(asked["options"]) == 4
        told = wait_until(lambda: "/required_actions" in output.read_text() and output.read_text(), timeout=120,
                          what=lambda: f"the command to say what it waits for: {output.read_text()}")
        assert "the deployment waits for an answer to its question" in told and "'bill_depth_mm'" in told, told
        wait_until(lambda: _parked(deployment, META_DAG, run, "clarify"), timeout=120,
                   what="the scheduler to see the asking try park")
        api.respond(META_DAG, run, "clarify", depth, {"target": None, "task": None}, map_index=0)
        assert command.wait(timeout=600) == 0, output.read_text()[-3000:]
    finally:
        command.kill()
    assert "regression of 'bill_depth_mm'" in output.read_text(), output.read_text()[-3000:]
    assert api.wait(META_DAG, run) == "success", _logs(deployment)
    with session_scope(catalog_settings) as session:
        built = session.scalars(select(schema.Pipeline).where(schema.Pipeline.owner == "asked")).one()
        remembered = recall(session, profile_dataset(data), "predict the bill", user="asked")
    assert built.target == "bill_depth_mm" and built.task_type == "regression"
    assert (remembered.target, remembered.how, remembered.own) == ("bill_depth_mm", "answered", True)


def test_a_chosen_build_with_one_target_that_cannot_be_built_stores_none_of_them(deployment, catalog_settings):
    """Services chosen for a goal of two targets (``interactive``; a person confirms the run's own choices through the
    REST API): the choice for rooms names a service its ranking does not offer, and price's pipeline, which builds,
    is not left stored beside nothing."""
    data = deployment.settings.home / "datasets" / "houses.csv"
    data.parent.mkdir(parents=True, exist_ok=True)
    houses().to_csv(data, index=False)
    login = deployment.login()
    api = Api(deployment.url, login.user, login.password)
    chosen = "rooms: modelling=kmeans_clustering"
    run = api.trigger(META_DAG, {"dataset": str(data), "goal": "predict both price and rooms", "interactive": True,
                                 "on_behalf_of": "half-chosen", "choices": chosen})
    api.question(META_DAG, run, "choose")
    wait_until(lambda: _parked(deployment, META_DAG, run, "choose"), timeout=120,
               what="the scheduler to see the asking try park")
    api.respond(META_DAG, run, "choose", "OK", {"choices": chosen})
    assert api.wait(META_DAG, run) == "failed", _logs(deployment)
    assert api.task_instances(META_DAG, run)["build"]["state"] == "failed"
    with session_scope(catalog_settings) as session:
        assert not session.scalars(select(schema.Pipeline).where(schema.Pipeline.owner == "half-chosen")).all()


def test_the_deployment_listens_on_this_machine_only(deployment):
    """By default every service of the deployment listens on the loopback address only: the api-server at the
    address it reports, and no log or health server at all; the machine's other addresses are refused."""
    found = {service: listening(pid) for service, pid in deployment.pids.items()}
    assert found["api-server"] == {("127.0.0.1", deployment.port)}, found
    assert not set().union(*(addresses for service, addresses in found.items() if service != "api-server")), found
    assert deployment.url == f"http://127.0.0.1:{deployment.port}"
    assert deployment.listening == f"127.0.0.1:{deployment.port} (this machine only)"
    others = [a.address for addresses in psutil.net_if_addrs().values() for a in addresses
              if a.family == socket.AF_INET and not ipaddress.ip_address(a.address).is_loopback]
    for address in others:
        with pytest.raises(ConnectionRefusedError), socket.create_connection((address, deployment.port), timeout=5):
            pass


def test_a_trigger_naming_a_dataset_outside_the_roots_fails_at_once_and_records_nothing(deployment, embedder,
                                                                                          tmp_path):
    """A REST trigger of the meta-DAG or of a built pipeline's DAG with a path outside the data roots, or with a
    link inside a root to a file outside, fails its first task without retries, says where datasets may live,
    quotes nothing of the file and records no run."""
    settings = deployment.settings
    inside = settings.home / "datasets" / "penguins.csv"
    inside.parent.mkdir(parents=True, exist_ok=True)
    datasets.load("penguins").to_csv(inside, index=False)
    pipeline = plan(inside, "predict the species", user="roots-owner", settings=settings, embedder=embedder).pipeline
    write_spec(pipeline.id, settings)
    outside = tmp_path / "secret.csv"
    outside.write_text(f"{CANARY},species\n1,Adelie\n")
    link = settings.home / "datasets" / "innocent.csv"
    link.symlink_to(outside)
    login = deployment.login()
    api = Api(deployment.url, login.user, login.password)
    child = dag_id(pipeline.id)
    api.wait_for_dag(child)
    # dagsmith's pages read the login from the simple auth manager as from FAB's (tests/ui): an admin sees all
    assert pipeline.id in [p["id"] for p in api.call("GET", "/dagsmith/api/pipelines")]

    triggers = [(META_DAG, "plan", {"goal": "predict the species", "on_behalf_of": "roots-trigger"}),
                (child, "start", {})]
    runs = [(dag, first_task, path, api.trigger(dag, {**conf, "dataset": str(path)}))
            for dag, first_task, conf in triggers for path in (outside, link)]
    for dag, first_task, path, run in runs:
        assert api.wait(dag, run, timeout=300) == "failed", _logs(deployment)
        failed = api.task_instances(dag, run)[first_task]
        assert (failed["state"], failed["try_number"]) == ("failed", 1), failed
        log = api.log_text(dag, run, first_task)
        assert f"the dataset {path} is outside the data folders this deployment reads datasets from" in log, log
        assert "DAGSMITH_DATA_ROOTS" in log and CANARY not in log
    with session_scope(settings) as session:
        assert not session.scalars(select(schema.Pipeline).where(schema.Pipeline.owner == "roots-trigger")).all()
        assert not session.scalars(select(schema.Execution).where(schema.Execution.pipeline_id == pipeline.id)).all()


def test_dagsmith_run_submits_to_the_running_deployment_and_reports_as_in_process(deployment):
    """`dagsmith serve` runs for this home, so `dagsmith run` plans and runs there through the REST API, printing
    the pipeline built and each step as it ends and then the results; a wrong login or a dataset the deployment
    cannot read is refused with one clear message."""
    settings = deployment.settings
    data = settings.home / "datasets" / "penguins-warm.csv"
    data.parent.mkdir(parents=True, exist_ok=True)
    datasets.load("penguins").to_csv(data, index=False)
    home = {"home": settings.home, "database_url": settings.database_url}

    ran = _dagsmith("run", str(data), "explore this dataset and describe it", "--user", "cli-warm", **home)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    assert f"submitted to {deployment.url}" in ran.stderr and "Traceback" not in ran.stderr
    header = re.search(r"pipeline (\d+) .*: exploratory_analysis, \d+ steps, runtime local", ran.stdout)
    assert header and "completed in" in ran.stdout and "answer.md" in ran.stdout, ran.stdout
    with session_scope(settings) as session:  # run by the deployment's scheduler, not in the command's process
        [execution] = session.scalars(select(schema.Execution).where(
            schema.Execution.pipeline_id == int(header.group(1)))).all()
        assert execution.status == "completed" and execution.owner == "cli-warm"
        assert execution.airflow_run_id.startswith("manual__")  # triggered by the meta-DAG's execute task

    wrong = _dagsmith("run", str(data), "explore this dataset", "--airflow-url", deployment.url, **home,
                      **{PASSWORD_VARIABLE: "not-the-password"})
    assert wrong.returncode == 3 and "refused the login of user 'admin'" in wrong.stderr, wrong.stderr
    assert "not-the-password" not in wrong.stdout + wrong.stderr and "Traceback" not in wrong.stderr
    outside = _dagsmith("run", "/etc/hostname", "explore this dataset", **home)
    assert outside.returncode == 2 and "outside the data folders" in outside.stderr, outside.stderr
    assert "--in-process" in outside.stderr


def test_dagsmith_run_on_a_deployment_that_does_not_answer_says_so(tmp_path):
    """Named by address or left running by `dagsmith serve` but not answering, a deployment is one clear error
    (no secret in it); a state file whose `dagsmith serve` has gone is removed, and the run stays here."""
    data = tmp_path / "datasets" / "penguins.csv"
    data.parent.mkdir()
    datasets.load("penguins").to_csv(data, index=False)
    dead = f"http://127.0.0.1:{free_port()}"
    ran = _dagsmith("run", str(data), "explore this dataset", home=tmp_path, **{URL_VARIABLE: dead,
                                                                              PASSWORD_VARIABLE: "secret-7f3"})
    assert ran.returncode == 3, ran.stdout + ran.stderr
    assert f"no Airflow answers at {dead}" in ran.stderr and "dagsmith serve" in ran.stderr, ran.stderr
    assert "secret-7f3" not in ran.stdout + ran.stderr and "Traceback" not in ran.stderr
    both = _dagsmith("run", str(data), "explore", "--in-process", "--airflow-url", dead, home=tmp_path)
    assert both.returncode == 2 and "pass one" in both.stderr, both.stderr

    state = tmp_path / "airflow-serve" / STATE_FILE
    state.parent.mkdir()
    hung = {"url": dead, "port": int(dead.rsplit(":", 1)[1]), "pid": os.getpid(), "extra_data_roots": []}
    state.write_text(json.dumps(hung))  # this process runs, so the deployment it names counts as running
    served = _dagsmith("run", str(data), "explore this dataset", home=tmp_path)
    assert served.returncode == 3 and f"no Airflow answers at {dead}" in served.stderr, served.stderr
    assert "--in-process" in served.stderr and "Traceback" not in served.stderr
    gone = subprocess.Popen(["true"])
    gone.wait()
    state.write_text(json.dumps({**hung, "pid": gone.pid}))
    assert find_deployment(Settings(home=tmp_path, database_url=None), None) is None and not state.exists()
    with pytest.raises(InputError, match="without a login") as refused:  # a login in the address is not echoed
        find_deployment(Settings(home=tmp_path, database_url=None), "http://admin:hunter2@localhost:8080")
    assert "hunter2" not in str(refused.value)
