"""``dagsmith run`` starts its ``dag.test()`` child as the command starts, before the CLI's imports, when the run
will be on this machine; otherwise it starts none."""

from __future__ import annotations

import pytest

from dagsmith.airflow.serve import state_file
from dagsmith.cli import ahead


@pytest.fixture
def home(store, monkeypatch):
    monkeypatch.setenv("DAGSMITH_HOME", str(store.home))
    monkeypatch.setenv("DAGSMITH_DATABASE_URL", store.database_url)
    monkeypatch.delenv("DAGSMITH_AIRFLOW_URL", raising=False)
    monkeypatch.setattr(ahead, "_early", None)
    return store


@pytest.mark.parametrize("argv", [["plan", "x.csv", "a goal"], ["run", "--help"], ["run", "x.csv", "-h"],
                                  ["run", "x.csv", "a goal", "--airflow-url", "http://airflow.example:8080"],
                                  ["run", "x.csv", "a goal", "--airflow-url=http://airflow.example:8080"]])
def test_no_child_starts_for_other_commands_help_or_a_named_deployment(home, argv):
    ahead.start_early(argv)
    assert ahead._early is None


def test_a_running_deployment_takes_the_run_unless_it_is_asked_in_process(home, monkeypatch):
    state_file(home).parent.mkdir(parents=True)
    state_file(home).write_text("{}")
    ahead.start_early(["run", "x.csv", "a goal"])
    assert ahead._early is None
    monkeypatch.setenv("DAGSMITH_AIRFLOW_URL", "http://airflow.example:8080")
    ahead.start_early(["run", "x.csv", "a goal", "--in-process"])
    started = ahead._early
    assert started is not None
    started.close()


def test_a_local_run_hands_the_child_it_started_to_the_run_and_stops_it_unused(home):
    ahead.start_early(["run", "x.csv", "a goal", "--json"])
    started = ahead._early
    assert started is not None and started.process.poll() is None, "the child runs while the command goes on"
    assert ahead.child_for(home, "local") is started and ahead._early is None, "the run takes it, once"
    started.close()  # never given a pipeline: stopped, and its log removed
    assert started.process.returncode is not None and not started.log_file.exists()


def test_the_child_gets_ready_for_the_runtime_the_run_names(home):
    """A run on containers starts no zygote of the local runtime's warm starts in its child: the child is told the
    run's runtime, and a child started for another runtime is not taken."""
    ahead.start_early(["run", "x.csv", "a goal", "--runtime=docker"])
    started = ahead._early
    assert started is not None and started.runtime == "docker"
    taken = ahead.child_for(home, "local")
    assert taken is not started and taken.runtime == "local"
    for child in (started, taken):
        child.close()
    ahead.start_early(["run", "x.csv", "a goal", "--runtime", "kubernetes"])
    assert ahead._early is not None and ahead._early.runtime == "kubernetes"
    ahead._early.close()
    ahead._early = None
    ahead.start_early(["run", "x.csv", "a goal", "--runtime", "nowhere"])  # the command says what is wrong
    assert ahead._early is None
