"""dagsmith on Airflow's CeleryExecutor on one machine (`dagsmith serve --executor celery --workers 2`): a real Redis
broker, two real Celery workers with names of their own, a real scheduler. A pipeline's steps land on both workers
(each try records its worker), its model search's candidates run at once, a broker killed while they run is
restarted and loses none of them, and a worker killed mid-step has its try retried on the other; a worker that does
not see the shared workspace root refuses to start."""

from __future__ import annotations

import contextlib
import json
from dataclasses import replace
import os
import signal
import subprocess
import sys
import time
from datetime import datetime
from itertools import combinations

import psutil
import pytest
from sqlalchemy import select

from dagsmith import datasets
from dagsmith.agents.planner import plan
from dagsmith.execution.specs import dag_id, write_spec
from dagsmith.execution.workers import SHARED_MARKER
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from tests.deploy.airflow_api import Api
from tests.deploy.serving import dagsmith, listening, service_logs, serving
from tests.processes import processes_naming
from tests.waiting import wait_until

pytestmark = pytest.mark.xdist_group("celery-deployment")

#: A task whose worker stops answering is failed (and retried) by the scheduler after this many seconds.
HEARTBEAT_TIMEOUT = 15
#: A task the killed worker had taken but not yet started stays queued, with no heartbeat to miss, until the scheduler
#: requeues it after this many seconds (600 by default, more than the test waits).
QUEUED_TIMEOUT = 120


@pytest.fixture(scope="module")
def deployment(catalog_settings, server_home, tmp_path_factory):
    env = {"AIRFLOW__CELERY__WORKER_CONCURRENCY": "2",
           "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": str(HEARTBEAT_TIMEOUT),
           "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT_DETECTION_INTERVAL": "2",
           "AIRFLOW__SCHEDULER__TASK_QUEUED_TIMEOUT": str(QUEUED_TIMEOUT),
           "AIRFLOW__SCHEDULER__TASK_QUEUED_TIMEOUT_CHECK_INTERVAL": "5"}
    with serving(catalog_settings, server_home, tmp_path_factory.mktemp("celery") / "home", env,
                 executor="celery", workers=2) as served:
        yield served


def _running_try(settings, execution_id: int, positions: set[int]) -> tuple[int, str] | None:
    """The step position and worker of a try of one of these steps running now."""
    with session_scope(settings) as session:
        return session.execute(select(schema.PipelineStep.position, schema.StepAttempt.worker).join(
            schema.PipelineStep).where(schema.StepAttempt.execution_id == execution_id,
                                       schema.StepAttempt.status == "running",
                                       schema.PipelineStep.position.in_(positions))).first()


def _kill_tree(pid: int) -> None:
    """Kill a process and every process under it at once, as a lost machine or container loses them: Airflow runs
    each task in a process group of its own, which killing the worker's group would leave running."""
    root = psutil.Process(pid)
    for process in [root, *root.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.send_signal(signal.SIGKILL)


def _restart_broker(deployment) -> None:
    """Kill the broker as a crash would, and wait for the deployment's watch (what ``dagsmith serve`` runs every few
    seconds) to start it again."""
    killed = deployment.pids["redis"]
    os.kill(killed, signal.SIGKILL)
    wait_until(lambda: deployment.check_alive() or deployment.pids["redis"] != killed, timeout=60,
               what=lambda: f"the broker to be restarted: {service_logs(deployment)}")


def _execution(settings, run_id: str) -> int | None:
    with session_scope(settings) as session:
        return session.scalar(select(schema.Execution.id).where(schema.Execution.airflow_run_id == run_id))


def test_steps_run_on_both_workers_and_a_killed_workers_step_is_retried_on_the_other(deployment, embedder):
    settings = deployment.settings
    data = settings.home / "datasets" / "penguins.csv"
    data.parent.mkdir(parents=True, exist_ok=True)
    datasets.load("penguins").to_csv(data, index=False)
    # Candidates of a few seconds each: warm-started steps of the tests' 3-s search end within a second, sooner than
    # the broker dispatches the next one, and whether two overlap would be a race.
    planned = plan(data, "predict the species", user="celery-owner", settings=replace(settings, search_seconds=12),
                   embedder=embedder).pipeline
    write_spec(planned.id, settings, retry_delay_seconds=1)
    [searched] = [step.position for step in planned.steps if step.search]
    after = {step.position for step in planned.steps if step.position > searched}
    assert after, [step.stage for step in planned.steps]
    login = deployment.login()
    api = Api(deployment.url, login.user, login.password)
    child = dag_id(planned.id)
    api.wait_for_dag(child)
    triggered = time.monotonic()
    run = api.trigger(child, {"dataset": str(data), "user": "celery-owner"})

    # The broker is killed while the search's candidates run; then a step after the search is killed with its
    # worker mid-try, as a lost machine would be.
    execution_id = wait_until(lambda: _execution(settings, run), timeout=300, what="the run to start")
    wait_until(lambda: _running_try(settings, execution_id, {searched}), timeout=300, first=0.05, longest=0.1,
               what=lambda: f"a candidate of the search to run: {service_logs(deployment)}")
    _restart_broker(deployment)
    position, worker = wait_until(lambda: _running_try(settings, execution_id, after), timeout=300, first=0.05,
                                  longest=0.1, what=lambda: f"a step after the search: {service_logs(deployment)}")
    service = {name: service for service, name in deployment.worker_names.items()}[worker]
    _kill_tree(deployment.pids[service])
    killed = time.monotonic()

    assert api.wait(child, run, timeout=600) == "success", service_logs(deployment)
    print(f"run on two Celery workers: {time.monotonic() - triggered:.0f} s from trigger to success, "
          f"{time.monotonic() - killed:.0f} s of it after the kill")
    shown = dagsmith("pipelines", "show", str(planned.id), "--json", home=settings.home,
                     database_url=settings.database_url)
    assert shown.returncode == 0, shown.stderr
    [ran] = json.loads(shown.stdout)["runs"]
    tries = ran["tries"]
    assert {t["worker"] for t in tries} == set(deployment.worker_names.values()), tries
    lost, retried = [t for t in tries if t["position"] == position]
    assert (lost["worker"], lost["status"], lost["error_class"]) == (worker, "failed", "transient"), lost
    assert retried["status"] == "completed" and retried["worker"] != worker, retried
    # nothing the killed worker started writes into the cut-off try's folder any more: the retry removed it
    assert not processes_naming(f"{ran['workspace']}/attempts/{position:02d}-{lost['attempt']} /output"), "left"

    # The search's candidates ran at once: two of them overlapped. (Not necessarily all: a candidate whose dispatch
    # the broker's restart delayed may start after another has finished.)
    spans = [(t["microservice"], datetime.fromisoformat(t["started_at"]), datetime.fromisoformat(t["finished_at"]))
             for t in tries if t["position"] == searched]
    assert any(one != other and start < other_end and other_start < end
               for (one, start, end), (other, other_start, other_end) in combinations(spans, 2)), tries

    # Steps and candidates were sent to dagsmith's queue, bookkeeping (start, a search's selection, finish) to
    # Airflow's default one; the worker left listens nowhere.
    queues = {task: found["queue"] for task, found in api.task_instances(child, run).items()}
    steps = {task for task in queues if task.startswith("step_") and not task.endswith("__select")}
    assert {queues[task] for task in steps} == {"dagsmith"}, queues
    assert {queue for task, queue in queues.items() if task not in steps} == {"default"}, queues
    [survivor] = set(deployment.worker_names) - {service}
    assert not listening(deployment.pids[survivor])


def test_a_worker_that_does_not_see_the_shared_workspaces_refuses_to_start(tmp_path):
    """Its workspace root lacks the deployment's mark (the volume is not mounted there): one line, no traceback,
    and Airflow's worker never starts."""
    root = tmp_path / "workspaces"
    env = {**os.environ, "DAGSMITH_HOME": str(tmp_path), "DAGSMITH_WORKSPACE_ROOT": str(root)}
    refused = subprocess.run([sys.executable, "-m", "dagsmith.airflow.worker", "--celery-hostname", "w@host"],
                             capture_output=True, text=True, env=env, timeout=120)
    assert refused.returncode == 3, refused.stderr
    assert refused.stderr.strip() == (
        f"error: this worker's workspace root {root} is not the deployment's shared one (no {SHARED_MARKER} in it): "
        "mount the shared workspace volume there or set DAGSMITH_WORKSPACE_ROOT to where it is mounted")
