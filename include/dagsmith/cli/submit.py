"""``dagsmith run`` on a running deployment: the meta-DAG plans and runs the pipeline there, through Airflow's REST
API, while this command follows it and reports as the in-process path does.

The deployment is the one ``--airflow-url`` (or ``DAGSMITH_AIRFLOW_URL``) names, with the login in
``DAGSMITH_AIRFLOW_USER`` (default ``admin``) and ``DAGSMITH_AIRFLOW_PASSWORD``; else the one ``dagsmith serve``
runs for this ``DAGSMITH_HOME``, found by the state file it keeps beside its owner-only login while it runs. The
deployment reads the dataset itself, so it must lie in the deployment's data roots. Progress and results are read
from dagsmith's store, which this command must share with the deployment (it does with ``dagsmith serve``).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field, replace
from http import HTTPStatus
from pathlib import Path
from urllib.parse import urlsplit

from rich.markup import escape
from sqlalchemy import func, select

from dagsmith.airflow.ownership import BUILD_DAG_ID as META_DAG
from dagsmith.airflow.ownership import builder_dag_id
from dagsmith.airflow.rest import AirflowClient, AirflowError, AirflowUnreachable
from dagsmith.airflow.serve import ADMIN, LocalDeployment, state_file
from dagsmith.cli.output import console, progress
from dagsmith.cli.report import progress_lines, show
from dagsmith.config import URL_VARIABLE, Settings
from dagsmith.data.roots import DatasetRefused, confine
from dagsmith.errors import InputError, ServiceUnavailable, UserFacingError
from dagsmith.execution.history import execution_summary
from dagsmith.execution.specs import dag_id
from dagsmith.models.airflow import QUESTION_XCOM, SUMMARY_XCOM, AirflowState
from dagsmith.models.execution import RunSummary
from dagsmith.models.intent import GivenFields
from dagsmith.models.plan import PipelineStatus
from dagsmith.store import schema
from dagsmith.store.db import get_engine, session_scope
from dagsmith.store.events import run_events

USER_VARIABLE = "DAGSMITH_AIRFLOW_USER"
PASSWORD_VARIABLE = "DAGSMITH_AIRFLOW_PASSWORD"
#: The meta-DAG's tasks that plan, shown as they end: ``plan`` builds a clear goal's pipelines itself, ``build`` those
#: of a goal a person answered a question about or chose services for.
PLANNING = ("plan", "recommend", "build")
#: Those of them whose return values are the ids of the pipelines they built.
BUILDERS = ("plan", "build")
#: Airflow's REST API pushes nothing: its run is asked again after this long, or at once when the store announces
#: a change to a run (``store.events``).
POLL_SECONDS = 2.0
#: How long a report waits for Airflow to close a pipeline's run once its results are in, asking this often.
AIRFLOW_END_SECONDS = 30
AIRFLOW_END_POLL_SECONDS = 0.5


class RunFailed(UserFacingError):
    """The deployment's run ended before any pipeline ran (a refused dataset or goal, a failed task)."""


@dataclass(frozen=True)
class Deployment:
    url: str
    user: str
    password: str = field(repr=False)
    #: Settings whose data roots are the folders the deployment reads datasets from.
    roots: Settings


def _served(settings: Settings) -> dict | None:
    """What ``dagsmith serve`` wrote for this home, while the process that wrote it runs."""
    path = state_file(settings)
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
        os.kill(state["pid"], 0)
    except (FileNotFoundError, ValueError, KeyError):
        return None
    except ProcessLookupError:  # left by a dagsmith serve that was killed
        path.unlink(missing_ok=True)
        progress(f"removed {path}: the dagsmith serve that wrote it has stopped")
        return None
    except PermissionError:  # running as another user: still running
        pass
    return state


def find_deployment(settings: Settings, url: str | None) -> Deployment | None:
    """The deployment to submit to: the one ``url`` names, else the one ``dagsmith serve`` runs here, else none."""
    state = _served(settings)
    if not url:
        if state is None:
            return None
        login = LocalDeployment(settings, port=state["port"]).login()
        roots = replace(settings, extra_data_roots=tuple(Path(root) for root in state["extra_data_roots"]))
        return Deployment(state["url"], login.user, login.password, roots)
    url = url.rstrip("/")
    if urlsplit(url).password is not None or urlsplit(url).scheme not in ("http", "https"):
        raise InputError(f"--airflow-url takes an http(s) address without a login (the login goes in {USER_VARIABLE} "
                         f"and {PASSWORD_VARIABLE}), e.g. http://localhost:8080")  # the given address is not repeated
    password = os.environ.get(PASSWORD_VARIABLE)
    if password is None and state and state["url"] == url:  # this home's own deployment, named by its address
        return replace(find_deployment(settings, None), url=url)
    if password is None:
        raise InputError(f"the Airflow at {url} needs a login: set {USER_VARIABLE} (default {ADMIN}) and "
                         f"{PASSWORD_VARIABLE}, or pass --in-process to run on this machine")
    return Deployment(url, os.environ.get(USER_VARIABLE) or ADMIN, password, settings)


def submit(deployment: Deployment, data: Path, goal: str, *, runtime: str | None, user: str, choose: list[str],
           each_target: bool, given: GivenFields, descriptions: dict[str, str], settings: Settings,
           json: bool) -> list[dict]:
    """Trigger the meta-DAG with the dataset, goal and ``given`` fields, then follow it and each pipeline it builds to
    the end; the run summaries, as the in-process path reports them (printed as they come unless ``json``). Without
    ``runtime`` the deployment's default runtime runs the steps."""
    started = time.monotonic()
    try:
        dataset = confine(data, deployment.roots)
    except DatasetRefused as exc:
        raise InputError(f"{exc} Or pass --in-process to run it on this machine.") from None
    try:
        client = AirflowClient(deployment.url, deployment.user, deployment.password)
    except AirflowUnreachable as exc:
        raise AirflowUnreachable(f"{exc}: is the deployment running? Start it with `dagsmith serve`, check "
                                 f"--airflow-url ({URL_VARIABLE}), or pass --in-process to run on this "
                                 "machine") from None
    dag, params = _build_dag(client, deployment.user)
    runtime = runtime or params["runtime"]["value"]
    on_behalf_of = user if user != deployment.user else None  # the deployment lets admins only build for another
    run_id = client.trigger(dag, {"dataset": str(dataset), "goal": goal, "on_behalf_of": on_behalf_of,
                                  "runtime": runtime, "each_target": each_target, "choices": "\n".join(choose) or None,
                                  **({"columns": descriptions} if descriptions else {}),
                                  **given.model_dump(mode="json", exclude_defaults=True)})
    follow = _Follow(client, deployment.url, dag, run_id, goal, user, settings, json)
    if not json:
        progress(f"submitted to {deployment.url}: {follow.link(dag, run_id)}")
    try:
        with run_events(get_engine(settings)) as events:
            while not follow.poll(runtime):
                events.wait(timeout=POLL_SECONDS)
    except KeyboardInterrupt:
        raise RunFailed(f"stopped following; the run goes on: {follow.link(dag, run_id)}") from None
    seconds = round(time.monotonic() - started, 2)
    return [follow.report(pipeline_id, seconds) for pipeline_id in follow.executions]


def _build_dag(client: AirflowClient, login: str) -> tuple[str, dict]:
    """The build DAG the login triggers (under FAB its own, unless it is an admin: ``meta_dag``) and its run
    parameters with their defaults: the deployment's own (its default runtime)."""
    try:
        return builder_dag_id(login), _params(client, builder_dag_id(login))
    except AirflowError as exc:
        if exc.status not in (403, 404):
            raise
    try:
        return META_DAG, _params(client, META_DAG)
    except AirflowError as exc:
        if exc.status != 404:
            raise
        raise AirflowError(f"the Airflow at {client.base} has no {META_DAG} DAG: it is not a dagsmith deployment, or "
                           "its dag-processor has not parsed dagsmith's DAGs yet", 404) from None


def _params(client: AirflowClient, dag: str) -> dict:
    return client.call("GET", f"/api/v2/dags/{dag}/details")["params"]


class _Follow:
    """One meta-DAG run and the pipelines it builds, polled: what ended since the last poll is printed."""

    def __init__(self, client: AirflowClient, url: str, dag: str, run_id: str, goal: str, user: str,
                 settings: Settings, json: bool):
        self.client, self.url, self.dag, self.run_id, self.goal, self.user = client, url, dag, run_id, goal, user
        self.settings, self.json = settings, json
        self.seen: set = set()
        #: Built pipelines and their executions once started.
        self.executions: dict[int, int | None] = {}

    def link(self, dag: str, run_id: str) -> str:
        return f"{self.url}/dags/{dag}/runs/{run_id}"

    def _print(self, line: str) -> None:
        if not self.json:
            console.print(line, highlight=False)

    def poll(self, runtime: str) -> bool:
        """Print what ended since the last poll; whether every pipeline's results are in (or the run ended)."""
        state = self.client.run(self.dag, self.run_id)["state"]
        tasks = self.client.run_tasks(self.dag, self.run_id)
        for task in tasks:
            self._planned(task, runtime)
        looked_up = [self._finished(pipeline_id) for pipeline_id in self.executions]  # each one, not the first few
        finished = all(looked_up)
        for execution_id in filter(None, self.executions.values()):
            for line in progress_lines(self.settings, execution_id, self.seen):
                self._print(line)
        building = any(t["task_id"] in BUILDERS and not AirflowState.task_finished(t["state"]) for t in tasks)
        if AirflowState.run_finished(state) and not (self.executions and finished):
            raise RunFailed(self._failure(tasks))  # nothing left that could still finish
        return bool(self.executions) and finished and (not building or AirflowState.run_finished(state))

    def _planned(self, task: dict, runtime: str) -> None:
        name, index, state = task["task_id"], task["map_index"], task["state"]
        if name not in PLANNING or not AirflowState.task_finished(state) or (name, index) in self.seen:
            return
        self.seen.add((name, index))
        if state == AirflowState.SUCCESS and name in BUILDERS:
            built = self.client.xcom(self.dag, self.run_id, name, map_index=index)
            for pipeline_id in built:
                self.executions[pipeline_id] = None
                self._print(self._header(pipeline_id, runtime))
            if not built:
                self._asked()
        elif state == AirflowState.SUCCESS:
            self._print(f"[green]✓[/] {name}")
        elif state not in (AirflowState.UPSTREAM_FAILED, AirflowState.SKIPPED):
            self._print(f"[red]✗[/] {name}")

    def _asked(self) -> None:
        """Say what the run waits for when plan built nothing (this command never asks for an interactive choice):
        an answer to its question about the goal, given in Airflow."""
        question = self.client.xcom(self.dag, self.run_id, "plan", key=QUESTION_XCOM)
        self._print(f"the deployment waits for an answer to its question:\n{escape(question)}\nanswer in Airflow's "
                    f"Required Actions: {self.url}/required_actions (the run: {self.link(self.dag, self.run_id)})")

    def _header(self, pipeline_id: int, runtime: str) -> str:
        with session_scope(self.settings) as session:
            pipeline = session.get(schema.Pipeline, pipeline_id)
            if pipeline is None or (pipeline.goal, pipeline.owner) != (self.goal, self.user):
                raise ServiceUnavailable(
                    f"the deployment built pipeline {pipeline_id}, but this machine's dagsmith store does not hold it: "
                    "point DAGSMITH_DATABASE_URL (and DAGSMITH_HOME) at the deployment's to follow it here, or follow "
                    f"it in Airflow: {self.link(self.dag, self.run_id)}")
            steps = session.scalar(select(func.count()).where(schema.PipelineStep.pipeline_id == pipeline_id))
            target = f" of '{pipeline.target}'" if pipeline.target else ""
            gap = "\n" if len(self.executions) > 1 else ""
            return (f"{gap}pipeline {pipeline_id} [bold]{escape(pipeline.name)}[/]: {pipeline.task_type}{target}, "
                    f"{steps} steps, runtime {runtime}")

    def _finished(self, pipeline_id: int) -> bool:
        """Whether the pipeline's execution has ended (found once its DAG's run has recorded it)."""
        with session_scope(self.settings) as session:
            execution = session.scalars(select(schema.Execution).where(schema.Execution.pipeline_id == pipeline_id)
                                        .order_by(schema.Execution.id.desc()).limit(1)).first()
            if execution is None:
                return False
            self.executions[pipeline_id] = execution.id
            return execution.status in (PipelineStatus.COMPLETED, PipelineStatus.FAILED)

    def _failure(self, tasks: list[dict]) -> str:
        """Why the run ended without running a pipeline: the first failed task's own error."""
        for task in tasks:
            if task["state"] == AirflowState.FAILED:
                events = self.client.task_log(self.dag, self.run_id, task["task_id"], max(1, task["try_number"]),
                                              task["map_index"])
                details = [d for e in events for d in e.get("error_detail") or [] if not d.get("is_cause")]
                error = f": {details[-1]['exc_value']}" if details else ""
                return f"the deployment's {task['task_id']} task failed{error} ({self.link(self.dag, self.run_id)})"
        return f"the deployment's run ended without running a pipeline: {self.link(self.dag, self.run_id)}"

    def report(self, pipeline_id: int, seconds: float) -> dict:
        """The pipeline's run summary, printed unless ``json``; with its Airflow run's address and final state."""
        with session_scope(self.settings) as session:
            airflow_run = session.get(schema.Execution, self.executions[pipeline_id]).airflow_run_id
        link = self.link(dag_id(pipeline_id), airflow_run)
        deadline, airflow_state = time.monotonic() + AIRFLOW_END_SECONDS, None
        while not AirflowState.run_finished(airflow_state) and time.monotonic() < deadline:  # closing after finish
            airflow_state = self.client.run(dag_id(pipeline_id), airflow_run)["state"]
            time.sleep(0 if AirflowState.run_finished(airflow_state) else AIRFLOW_END_POLL_SECONDS)
        summary = self._summary(pipeline_id, airflow_run)
        if not self.json:
            show(summary, seconds, link)
        return {**summary.model_dump(mode="json"), "airflow_log": link, "time_to_results_seconds": seconds,
                "airflow_state": airflow_state}

    def _summary(self, pipeline_id: int, airflow_run: str) -> RunSummary:
        """The summary the run's ``finish`` task returned (its XCom); the store's record of a run that ended before
        ``finish`` closed it."""
        try:
            return RunSummary.model_validate(self.client.xcom(dag_id(pipeline_id), airflow_run, "finish",
                                                              key=SUMMARY_XCOM))
        except AirflowError as exc:
            if exc.status != HTTPStatus.NOT_FOUND:
                raise
        with session_scope(self.settings) as session:
            return execution_summary(session, session.get(schema.Execution, self.executions[pipeline_id]))
