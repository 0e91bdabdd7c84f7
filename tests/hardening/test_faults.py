"""Faults during a run: the worker killed mid-step (kill -9), the database dropping every connection, the
container engine down, a workspace whose disk is full. Runs resume or fail with a clear reason, no try stays
'running', and nothing a dead worker started is left behind."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select, text
from sqlalchemy.pool import NullPool

from dagsmith import scratch
from dagsmith.agents.planner import plan
from dagsmith.airflow.pipeline_shards import dag_file_name
from dagsmith.airflow.local import start_dag_test
from dagsmith.airflow.watch import ORPHANED_REASON, STOPPED_REASON
from dagsmith.config import CANDIDATES_AT_ONCE_VARIABLE, Settings
from dagsmith.execution import attempts, closing
from dagsmith.execution import run as execution
from dagsmith.execution.heartbeat import beating
from dagsmith.execution.reaper import ATTEMPT_LABEL, STALE_BEATS, reap
from dagsmith.execution.specs import dag_id, write_spec
from dagsmith.healing.classify import ErrorClass
from dagsmith.runtime import WRAPPER_VARIABLE, runtime_named
from dagsmith.runtime.base import Invocation, InvocationResult, Runtime
from dagsmith.store import schema
from dagsmith.store.databases import scratch_database
from dagsmith.store.db import get_engine, session_scope
from tests.conftest import ROOT
from tests.dags.test_meta_dag import penguins_in
from tests.dags.test_meta_dag import run_dag as run_as_worker
from tests.execution.conftest import run_dag
from tests.processes import command_line, processes_naming
from tests.records import one_running_try
from tests.runtime.test_docker_runtime import HOSTILE, penguins  # noqa: F401 (a fixture)
from tests.runtime.test_docker_runtime import runtime as container_runtime  # noqa: F401 (a fixture)

#: A workspace disk that holds the input but not everything the steps write.
DISK_BYTES = 900 * 1024
#: Runs a stored pipeline step by step in a process of its own, as an Airflow worker would.
WORKER = """
import sys
from dagsmith.config import Settings
from dagsmith.execution import attempts, run as execution
from dagsmith.runtime import runtime_named
settings = Settings(home=__import__("pathlib").Path(sys.argv[1]), database_url=sys.argv[2])
execution_id = execution.start(int(sys.argv[3]), sys.argv[4], user="worker", run_id=None, settings=settings)
print(execution_id, flush=True)
for position in range(int(sys.argv[5])):
    attempts.run_step(execution_id, position, runtime=runtime_named("local", settings), settings=settings)
"""


def _running_attempt(settings, execution_id: int) -> schema.StepAttempt | None:
    with session_scope(settings) as session:
        return session.scalar(select(schema.StepAttempt).where(schema.StepAttempt.execution_id == execution_id,
                                                               schema.StepAttempt.status == "running"))


def test_a_worker_killed_mid_step_leaves_no_try_running_and_the_run_resumes(store, churn_csv, embedder):
    planned = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder).pipeline
    worker = subprocess.Popen([sys.executable, "-c", WORKER, str(store.home), store.database_url, str(planned.id),
                               str(churn_csv), str(len(planned.steps))], stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    execution_id = int(worker.stdout.readline())
    deadline = time.monotonic() + 300
    while (attempt := _running_attempt(store, execution_id)) is None or attempt.attempt != 1 or \
            _step_stage(store, attempt.step_id) != "modelling":
        assert worker.poll() is None and time.monotonic() < deadline, "the worker never reached the model"
        time.sleep(0.05)
    os.killpg(worker.pid, signal.SIGKILL)  # the worker and the service it runs, as a lost machine would
    worker.wait()
    killed = attempt

    # Airflow's next try of the task (its scheduler notices the dead worker) resumes the same execution.
    runtime = runtime_named("local", store)
    with session_scope(store) as session:
        steps = session.scalars(select(schema.PipelineStep).where(schema.PipelineStep.pipeline_id == planned.id)
                                .order_by(schema.PipelineStep.position)).all()
        pending = [s.position for s in steps if s.status != "completed"]
    for position in pending:
        for _ in range(3):
            try:
                attempts.run_step(execution_id, position, runtime=runtime, settings=store)
                break
            except attempts.StepFailed:
                continue
    summary = closing.finish(execution_id, settings=store)
    assert summary.completed, summary
    with session_scope(store) as session:
        lost = session.get(schema.StepAttempt, killed.id)
        assert (lost.status, lost.error_class) == ("failed", ErrorClass.TRANSIENT.value)
        assert lost.error_text.startswith("worker died: no heartbeat since"), lost.error_text
        assert lost.decision["action"] == "retry"  # not the service's fault: the same service runs again
        assert session.scalar(select(schema.StepAttempt).where(schema.StepAttempt.status == "running")) is None


def test_a_run_whose_worker_died_between_steps_is_closed_after_an_hour(store, churn_csv, embedder):
    planned = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder).pipeline
    abandoned = execution.start(planned.id, str(churn_csv), user="ana", run_id=None, settings=store)
    runtime = runtime_named("local", store)
    attempts.run_step(abandoned, 0, runtime=runtime, settings=store)  # then the worker died: no try is running
    assert reap(store).runs == []  # quiet for seconds only: its next step may be queued
    with session_scope(store) as session:
        session.execute(text("UPDATE step_attempts SET started_at = started_at - interval '2 hours', "
                             "finished_at = finished_at - interval '2 hours' WHERE execution_id = :e"),
                        {"e": abandoned})
    env = {**os.environ, "DAGSMITH_DATABASE_URL": store.database_url, "DAGSMITH_HOME": str(store.home)}
    reaped = subprocess.run([sys.executable, "-m", "dagsmith.cli.app", "pipelines", "reap"], capture_output=True,
                            text=True, env=env, timeout=120)
    assert reaped.returncode == 0 and f"0 lost try(s) and 1 abandoned run(s): {abandoned}" in reaped.stdout, \
        reaped.stdout + reaped.stderr
    with session_scope(store) as session:
        closed = session.get(schema.Execution, abandoned)
        assert closed.status == "failed" and closed.error.startswith("abandoned: no activity for over 60 minutes")
        assert session.get(schema.Pipeline, planned.id).status == "failed"
    rerun = run_dag(store, planned.id, churn_csv)  # rerunning is safe
    assert rerun["status"] == "completed" and rerun["execution_id"] != abandoned


def _step_stage(settings, step_id: int) -> str:
    with session_scope(settings) as session:
        return session.get(schema.PipelineStep, step_id).stage


def _restart(settings, downtime: float) -> tuple[int, threading.Thread]:
    """What a database restart does to a run: every connection dropped, new ones refused for ``downtime`` seconds.
    Returns how many connections were dropped and the thread that lets them in again."""
    url = get_engine(settings).url
    admin = create_engine(url.set(database="postgres"), poolclass=NullPool, isolation_level="AUTOCOMMIT")

    def allow(allowed: bool):
        with admin.connect() as connection:
            connection.execute(text(f'ALTER DATABASE "{url.database}" WITH ALLOW_CONNECTIONS {allowed}'))

    allow(False)
    with admin.connect() as connection:
        dropped = connection.execute(text("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                          "WHERE datname = :name"), {"name": url.database}).scalar()
    reopen = threading.Thread(target=lambda: (time.sleep(downtime), allow(True)))
    reopen.start()
    return dropped, reopen


#: Where ``restarting`` counts the restarts it made (the run's process, ``runtime.WRAPPER_VARIABLE``).
RESTARTS_VARIABLE = "DAGSMITH_TEST_RESTARTS"


def restarting(inner: Runtime) -> Runtime:
    """In the run's process: the database restarts before each service runs, between two transactions of its try
    (the try opened, then recorded after the service), each restart counted in a folder."""
    return _Restarting(inner, Path(os.environ[RESTARTS_VARIABLE]))


class _Restarting:
    name = "local"

    def __init__(self, inner: Runtime, folder: Path):
        self.inner, self.folder = inner, folder

    def run(self, invocation: Invocation) -> InvocationResult:
        dropped, reopen = _restart(Settings.from_env(), downtime=2.0)
        (self.folder / f"restart-{len(list(self.folder.glob('restart-*')))}-{dropped}").touch()
        try:
            return self.inner.run(invocation)
        finally:
            reopen.join()


def test_a_database_restart_before_every_service_delays_the_run_but_does_not_fail_it(store, churn_csv, embedder,
                                                                                     tmp_path):
    planned = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder).pipeline
    restarts = {RESTARTS_VARIABLE: str(tmp_path), WRAPPER_VARIABLE: f"{__name__}:{restarting.__name__}",
                "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),  # this module, there
                CANDIDATES_AT_ONCE_VARIABLE: "1"}  # one restart at a time: each drops the connections of a live server
    outcome = run_dag(store, planned.id, churn_csv, variables=restarts)
    assert outcome["status"] == "completed", outcome
    dropped = [int(path.name.rsplit("-", 1)[1]) for path in tmp_path.glob("restart-*")]
    assert len(dropped) >= len(planned.steps) and all(n > 0 for n in dropped)
    with session_scope(store) as session:  # every try recorded whole: an outcome and an end
        attempts = session.scalars(select(schema.StepAttempt).where(
            schema.StepAttempt.execution_id == outcome["execution_id"])).all()
        # every try recorded whole; the model search's outperformed candidates are kept as skipped
        assert attempts and all(a.status in ("completed", "skipped") and a.finished_at for a in attempts)


def test_a_full_disk_fails_the_step_as_a_resource_error(store, churn_csv, embedder, tmp_path):
    planned = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder).pipeline
    small = tmp_path / "small"
    small.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES}", "tmpfs", str(small)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"a small filesystem cannot be mounted here: {mounted.stderr.strip()}")
    try:
        outcome = run_dag(dataclasses.replace(store, workspace_root=small), planned.id, churn_csv)
    finally:
        subprocess.run(["umount", "-l", str(small)], check=False)
    assert outcome["status"] == "failed"
    with session_scope(store) as session:
        assert "No space left on device" in session.get(schema.Execution, outcome["execution_id"]).error
        attempts = session.scalars(select(schema.StepAttempt).where(
            schema.StepAttempt.execution_id == outcome["execution_id"])).all()
        assert all(a.status in ("failed", "completed") for a in attempts)  # nothing left 'running'
        assert any(a.error_class == ErrorClass.RESOURCE.value and "No space left on device" in a.error_text
                   for a in attempts), [(a.error_class, (a.error_text or "")[-200:]) for a in attempts]


def _drop_connections(settings) -> int:
    """Terminate every other connection to the store, as a database restart or a failover does."""
    outsider = create_engine(get_engine(settings).url, poolclass=NullPool)
    with outsider.connect() as connection:
        return connection.execute(text("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                       "WHERE datname = current_database() AND pid <> pg_backend_pid()")).scalar()


def test_a_beating_try_is_never_reaped_and_a_silent_one_is_within_six_beats(settings):
    fast = dataclasses.replace(settings, heartbeat_seconds=0.5)
    run_id, attempt_id = one_running_try(fast)
    beats = []
    with beating(attempt_id, fast):
        for tick in range(12):  # 6 s: twice the silence after which a try is taken for dead
            time.sleep(0.5)
            assert reap(fast).tries == [], f"a live try was reaped after {tick / 2} s"
            with session_scope(fast) as session:
                beats.append(session.get(schema.StepAttempt, attempt_id).heartbeat_at)
            if tick == 5:
                assert _drop_connections(fast) > 0  # the heartbeat's connection too: its next beat reconnects
    before, after = [b for b in beats[:6] if b], [b for b in beats[6:] if b]
    assert before and after and max(after) > max(before), beats  # beating went on after the connections dropped

    silent = time.monotonic()  # the block ended: as if the worker died now
    while not (reaped := reap(fast)).tries:
        assert time.monotonic() - silent < 30, "a silent try was never reaped"
        time.sleep(0.1)
    detected = time.monotonic() - silent
    print(f"silent try reaped after {detected:.1f} s (heartbeat 0.5 s, {STALE_BEATS} beats)")
    assert (reaped.tries, reaped.runs) == ([attempt_id], [run_id])
    assert detected <= STALE_BEATS * 0.5 + 2
    with session_scope(fast) as session:
        attempt, run = session.get(schema.StepAttempt, attempt_id), session.get(schema.Execution, run_id)
        assert (attempt.status, attempt.error_class) == ("failed", ErrorClass.TRANSIENT.value)
        assert attempt.error_text.startswith("worker died: no heartbeat since"), attempt.error_text
        assert (run.status, run.error) == ("failed", attempt.error_text) and run.finished_at is not None
        assert session.get(schema.Pipeline, run.pipeline_id).status == "failed"


def _running_try_of(settings, pipeline_id: int) -> schema.StepAttempt | None:
    with session_scope(settings) as session:
        return session.scalar(select(schema.StepAttempt).join(schema.Execution).where(
            schema.Execution.pipeline_id == pipeline_id, schema.StepAttempt.status == "running"))


def _workspace(settings, attempt: schema.StepAttempt) -> str:
    """The run's own folder: another run's leftovers name the same attempt folders under theirs."""
    with session_scope(settings) as session:
        return session.get(schema.Execution, attempt.execution_id).workspace


def _alive(pid: int) -> bool:
    try:
        return "\tZ" not in Path(f"/proc/{pid}/status").read_text().split("State:", 1)[1].splitlines()[0]
    except (OSError, IndexError):
        return False


def test_a_killed_dagsmith_run_is_reaped_with_the_reason_and_the_pipeline_reruns(store, churn_csv, embedder):
    planned = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder).pipeline
    fast = dataclasses.replace(store, heartbeat_seconds=1.0)
    env = {**os.environ, "DAGSMITH_DATABASE_URL": store.database_url, "DAGSMITH_HOME": str(store.home),
           "DAGSMITH_HEARTBEAT_SECONDS": "1"}
    cli = subprocess.Popen([sys.executable, "-m", "dagsmith.cli.app", "pipelines", "rerun", str(planned.id)],
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while (attempt := _running_try_of(store, planned.id)) is None or \
                _step_stage(store, attempt.step_id) != "modelling" or \
                not (services := processes_naming(f"{_workspace(store, attempt)}/attempts/"
                                                  f"{_position(store, attempt.step_id):02d}-")):
            assert cli.poll() is None and time.monotonic() < deadline, "the run never reached its model"
            time.sleep(0.05)
    finally:
        os.killpg(cli.pid, signal.SIGKILL)  # `dagsmith run`, Airflow's task runner: everything in its group
        cli.wait()
    killed = time.monotonic()
    while not (reaped := reap(fast)).tries:  # what the next run's start, or `dagsmith pipelines reap`, does
        assert time.monotonic() - killed < 60, "the dead worker's try was never reaped"
        time.sleep(0.2)
    print(f"dead worker's try reaped {time.monotonic() - killed:.1f} s after kill -9 (heartbeat 1 s)")
    # the candidate seen running, and any other candidate of its search that ran beside it
    assert attempt.id in reaped.tries and reaped.runs == [attempt.execution_id]
    with session_scope(store) as session:
        assert {(t.execution_id, t.step_id) for t in session.scalars(select(schema.StepAttempt).where(
            schema.StepAttempt.id.in_(reaped.tries)))} == {(attempt.execution_id, attempt.step_id)}
    assert not [pid for pid in services if _alive(pid)]  # the service died with its worker
    with session_scope(store) as session:
        lost, run = session.get(schema.StepAttempt, attempt.id), session.get(schema.Execution, attempt.execution_id)
        assert lost.status == "failed" and lost.error_text.startswith("worker died: no heartbeat since")
        assert run.status == "failed" and run.error == lost.error_text
        assert session.get(schema.Pipeline, planned.id).status == "failed"
        assert session.scalar(select(schema.StepAttempt).where(schema.StepAttempt.status == "running")) is None
        killed_workspace = run.workspace
    rerun = run_dag(store, planned.id, churn_csv)
    assert rerun["status"] == "completed" and str(rerun["workspace"]) != killed_workspace


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid``: the Airflow run `dagsmith run` starts, and the services it runs."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            children.setdefault(int(stat.read_text().rsplit(")", 1)[1].split()[1]), []).append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    found, todo = [], [pid]
    while todo:
        below = children.get(todo.pop(), [])
        found += below
        todo += below
    return found


def _command(pid: int) -> str:
    return (command_line(pid) or str(pid))[:200]


@pytest.mark.parametrize("sent", [signal.SIGKILL, signal.SIGINT], ids=["kill -9", "ctrl-c"])
def test_a_stopped_dagsmith_run_stops_its_run_at_once_and_leaves_nothing(sent, store, churn_csv, embedder):
    """`dagsmith run` killed (kill -9 of its own process) or interrupted: its Airflow run records the run
    interrupted and ends, with its services, its private scratch folders and its Airflow metadata."""
    planned = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder).pipeline
    env = {**os.environ, "DAGSMITH_DATABASE_URL": store.database_url, "DAGSMITH_HOME": str(store.home)}
    cli = subprocess.Popen([sys.executable, "-m", "dagsmith.cli.app", "pipelines", "rerun", str(planned.id)],
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    roots = store.home / "scratch"
    deadline = time.monotonic() + 300
    while (attempt := _running_try_of(store, planned.id)) is None or \
            not processes_naming(f"/attempts/{_position(store, attempt.step_id):02d}-"):
        assert cli.poll() is None and time.monotonic() < deadline, "the run never started a service"
        time.sleep(0.05)
    staged = [folder for folder in roots.glob("*/*") if folder.is_dir()]
    assert staged and all(f.stat().st_mode & 0o777 == 0o700 for f in [*staged, *(f.parent for f in staged)])
    below = _descendants(cli.pid)
    os.kill(cli.pid, sent)
    stopped = time.monotonic()
    while (left := [_command(pid) for pid in below if _alive(pid)]) or _running_try_of(store, planned.id):
        assert time.monotonic() - stopped < 60, f"the run outlived its CLI: {left or 'its try is running'}"
        time.sleep(0.1)
    print(f"run stopped {time.monotonic() - stopped:.1f} s after {sent.name}")
    cli.wait(timeout=60)
    reason = ORPHANED_REASON if sent == signal.SIGKILL else STOPPED_REASON
    with session_scope(store) as session:
        run = session.get(schema.Execution, attempt.execution_id)
        assert (run.status, run.error) == ("failed", reason)
        assert session.get(schema.StepAttempt, attempt.id).error_text == reason
    assert not list(roots.iterdir()) and not list((store.home / "airflow" / "runs").iterdir())
    if sent == signal.SIGINT:
        assert cli.returncode == 130 and "recorded as interrupted" in " ".join(cli.stderr.read().split())


def test_the_scratch_root_of_a_run_killed_whole_is_removed_at_the_next_start(tmp_path):
    """A run killed with its CLI at once cannot clean up; its scratch root goes at the next run's start (the lock
    it held is free), and a live run's root stays."""
    holder = ("import sys, time; from pathlib import Path; from dagsmith import scratch; "
              "root = scratch.new_root(Path(sys.argv[1])); (root.folder / 'params.json').write_text('{}'); "
              "print(root.folder, flush=True); time.sleep(600)")
    runs = [subprocess.Popen([sys.executable, "-c", holder, str(tmp_path)], stdout=subprocess.PIPE, text=True)
            for _ in range(2)]
    killed, alive = (Path(run.stdout.readline().strip()) for run in runs)
    try:
        runs[0].kill()
        runs[0].wait()
        assert scratch.sweep(tmp_path) == [killed]
        assert not killed.exists() and not killed.with_suffix(".lock").exists()
        assert (alive / "params.json").exists() and alive.stat().st_mode & 0o777 == 0o700
    finally:
        runs[1].kill()
        runs[1].wait()


_STEP = """
import time
from dagsmith import scratch
with scratch.scratch_folder("dagsmith-tabular_loader-") as staged:
    (staged / "params.json").write_text("{}")
    print(staged, flush=True)
    time.sleep(600)
"""


def test_a_step_killed_with_its_worker_leaves_its_scratch_to_the_next_step(tmp_path, monkeypatch):
    """A deployment's worker killed mid-step cannot clean up: what its step staged goes when the next step on the
    machine starts, and a live step's stays; a step's own root goes when it ends."""
    env = {name: value for name, value in os.environ.items() if name != scratch.SCRATCH_VARIABLE}
    steps = [subprocess.Popen([sys.executable, "-c", _STEP], stdout=subprocess.PIPE, text=True,
                              env={**env, "TMPDIR": str(tmp_path)}) for _ in range(2)]
    killed, alive = (Path(step.stdout.readline().strip()) for step in steps)
    monkeypatch.delenv(scratch.SCRATCH_VARIABLE, raising=False)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    try:
        steps[0].kill()
        steps[0].wait()
        assert killed.exists() and killed.parent.parent.parent == tmp_path
        with scratch.scratch_folder("dagsmith-tabular_loader-") as own:
            assert not killed.parent.exists() and not killed.parent.with_suffix(".lock").exists()
            assert (alive / "params.json").exists() and alive.parent.stat().st_mode & 0o777 == 0o700
        assert not own.parent.exists() and scratch.SCRATCH_VARIABLE not in os.environ
    finally:
        steps[1].kill()
        steps[1].wait()


def test_a_pipeline_run_on_a_worker_stages_its_steps_under_a_root_it_removes(catalog_settings, embedder, tmp_path,
                                                                             monkeypatch):
    """Run as a deployment's worker runs it (no run gave it a scratch root), each step's folders are held in roots
    of their own in the machine's temporary folder, and none is left when the run ends."""
    data = penguins_in(catalog_settings.home / "datasets" / tmp_path.name)
    pipeline = plan(data, "explore this dataset", user="worker-scratch", settings=catalog_settings,
                    embedder=embedder).pipeline
    write_spec(pipeline.id, catalog_settings)
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the run's processes' temporary folder
    monkeypatch.delenv(scratch.SCRATCH_VARIABLE, raising=False)
    state, output = run_as_worker(catalog_settings, {"dataset": str(data)}, dag_file=dag_file_name(pipeline.id),
                                  name=dag_id(pipeline.id))
    assert state == "success", output[-4000:]
    roots = tmp_path / f"dagsmith-scratch-{os.getuid()}"
    assert roots.is_dir(), "the steps staged under roots of their own"
    assert not list(roots.iterdir()), "each step removed its root"


def test_the_embedded_database_stops_with_its_last_live_user(tmp_path):
    """pgserver stops the server when the last process on its list of users exits; one killed with -9 stays on
    that list, and used to keep the server running for ever."""
    user = ("import sys; from pathlib import Path; from dagsmith.store.embedded import embedded_url; "
            "embedded_url(Path(sys.argv[1])); print('joined', flush=True); sys.stdin.read()")
    users = []
    for _ in range(2):
        users.append(subprocess.Popen([sys.executable, "-c", user, str(tmp_path)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True))
        assert users[-1].stdout.readline() == "joined\n"
    server = int((tmp_path / "postgres" / "postmaster.pid").read_text().split()[0])
    try:
        users[0].kill()
        users[0].wait()
        users[1].stdin.close()  # the last live user leaves as usual
        assert users[1].wait(timeout=60) == 0
        assert not _alive(server), "the embedded server outlived its last live user"
    finally:
        if _alive(server):
            os.kill(server, signal.SIGQUIT)


def _position(settings, step_id: int) -> int:
    with session_scope(settings) as session:
        return session.get(schema.PipelineStep, step_id).position


def test_a_container_engine_that_is_down_stops_the_run_at_once_with_how_to_fix_it(store, churn_csv, embedder,
                                                                                   monkeypatch, tmp_path):
    planned = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder).pipeline
    dead = "unix:///nonexistent/docker.sock"
    env = {**os.environ, "DAGSMITH_DATABASE_URL": store.database_url, "DAGSMITH_HOME": str(store.home),
           "DOCKER_HOST": dead}
    started = time.monotonic()
    refused = subprocess.run([sys.executable, "-m", "dagsmith.cli.app", "pipelines", "rerun", str(planned.id),
                              "--runtime", "docker"], capture_output=True, text=True, env=env, timeout=300)
    print(f"refused in {time.monotonic() - started:.1f} s")
    message = " ".join(refused.stderr.split())
    assert refused.returncode == 3 and "Traceback" not in message, refused.stderr
    assert f"no container engine answers on {dead}" in message and "setup-container-runtime.sh" in message
    with session_scope(store) as session:  # refused before anything was recorded
        assert session.scalar(select(schema.Execution).where(schema.Execution.pipeline_id == planned.id)) is None

    # A run started in Airflow itself (a schedule, the REST API): its first try fails for good, saying why.
    monkeypatch.setenv("DOCKER_HOST", dead)
    write_spec(planned.id, store)
    log = tmp_path / "airflow.log"
    with open(log, "w", encoding="utf-8") as output:
        airflow = start_dag_test(planned.id, {"dataset": str(churn_csv), "runtime": "docker", "user": "ana"},
                                 store, output)
        assert airflow.wait(timeout=600) == 0
    assert airflow.result().state == "failed"
    with session_scope(store) as session:
        run = session.scalar(select(schema.Execution).where(schema.Execution.pipeline_id == planned.id))
        attempts = session.scalars(select(schema.StepAttempt).where(schema.StepAttempt.execution_id == run.id)).all()
        assert run.status == "failed" and f"no container engine answers on {dead}" in run.error, run.error
        assert [(a.status, a.error_class) for a in attempts] == [("failed", ErrorClass.ENVIRONMENT.value)]


def test_a_machine_without_bubblewrap_stops_a_local_run_at_once_with_how_to_install_it(store, churn_csv, embedder,
                                                                                      tmp_path):
    planned = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder).pipeline
    env = {**os.environ, "DAGSMITH_DATABASE_URL": store.database_url, "DAGSMITH_HOME": str(store.home),
           "PATH": str(tmp_path)}  # no bwrap on it
    refused = subprocess.run([sys.executable, "-m", "dagsmith.cli.app", "pipelines", "rerun", str(planned.id),
                              "--runtime", "local"], capture_output=True, text=True, env=env, timeout=300)
    message = " ".join(refused.stderr.split())
    assert refused.returncode == 3 and "Traceback" not in message, refused.stderr
    assert "bubblewrap sandbox" in message and "apt-get install bubblewrap" in message, message
    with session_scope(store) as session:  # refused before anything was recorded
        assert session.scalar(select(schema.Execution).where(schema.Execution.pipeline_id == planned.id)) is None


#: Runs the never-ending service in a container for one try, as a step's worker does, until it is killed.
CONTAINER_WORKER = """
import sys
from pathlib import Path
from dagsmith.execution.reaper import ATTEMPT_LABEL
from dagsmith.runtime.base import Invocation
from dagsmith.runtime.docker import DockerRuntime
service = Path(sys.argv[2])
files = {p.name: p.read_text() for p in service.iterdir() if p.is_file()}
DockerRuntime(sys.argv[1]).run(Invocation(service.name, files, Path(sys.argv[3]), Path(sys.argv[4]),
                                          labels={ATTEMPT_LABEL: sys.argv[5]}))
"""


def test_the_container_of_a_killed_worker_is_removed_with_its_try(settings, server_home, container_runtime,  # noqa: F811
                                                                   penguins, tmp_path, monkeypatch):  # noqa: F811
    fast = dataclasses.replace(settings, heartbeat_seconds=0.5)
    _, attempt_id = one_running_try(fast)
    label = _container_label(fast, attempt_id)
    worker = subprocess.Popen([sys.executable, "-c", CONTAINER_WORKER, container_runtime.base_url,
                               str(HOSTILE / "sleeper"), str(penguins), str(tmp_path / "out"), label],
                              start_new_session=True)
    its_containers = {"label": f"{ATTEMPT_LABEL}={label}"}
    deadline = time.monotonic() + 180
    while not container_runtime.api.containers(filters=its_containers):
        assert worker.poll() is None and time.monotonic() < deadline, "the container never started"
        time.sleep(0.2)
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()
    time.sleep(1)
    assert container_runtime.api.containers(filters=its_containers)  # the worker is gone, its container runs on

    monkeypatch.setenv("DOCKER_HOST", container_runtime.base_url)  # where the reapers find the engine
    # Another store on the same engine reaps its own lost try of the same id: this store's container runs on.
    with scratch_database(Settings(home=server_home, database_url=None)) as other:
        elsewhere = dataclasses.replace(fast, home=tmp_path / "elsewhere", database_url=other.database_url)
        assert one_running_try(elsewhere)[1] == attempt_id
        while not (theirs := reap(elsewhere)).tries:
            assert time.monotonic() < deadline, "the other store's try was never reaped"
            time.sleep(0.2)
        assert (theirs.tries, theirs.containers) == ([attempt_id], 0)
    assert container_runtime.api.containers(filters=its_containers)

    while not (reaped := reap(fast)).tries:
        assert time.monotonic() < deadline, "the dead worker's try was never reaped"
        time.sleep(0.2)
    assert (reaped.tries, reaped.containers) == ([attempt_id], 1)
    assert container_runtime.api.containers(all=True, filters=its_containers) == []


def _container_label(settings: Settings, attempt_id: int) -> str:
    with session_scope(settings) as session:
        return session.get(schema.StepAttempt, attempt_id).container_label
