"""The data-roots policy (``dagsmith.data.roots``) on real files, links, pipes and environments."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from dagsmith.airflow.local import airflow_env
from dagsmith.airflow.serve import LocalDeployment
from dagsmith.config import LOCAL_CLI_VARIABLE, Settings
from dagsmith.data.roots import DatasetRefused, confine, data_roots

CANARY = "canary-3b9d1e"


@pytest.fixture
def home(tmp_path) -> Settings:
    (tmp_path / "home" / "datasets").mkdir(parents=True)
    return Settings(home=tmp_path / "home", database_url=None)


@pytest.fixture
def secret(tmp_path) -> Path:
    """A file outside every root whose first line is a canary."""
    path = tmp_path / "outside" / "secret.csv"
    path.parent.mkdir()
    path.write_text(f"{CANARY},x\n1,2\n")
    return path


def _refused(given: str | Path, settings: Settings) -> str:
    with pytest.raises(DatasetRefused) as refused:
        confine(given, settings)
    message = str(refused.value)
    assert CANARY not in message
    return message


def test_a_file_inside_a_root_is_allowed_by_path_or_uri(home):
    data = home.home / "datasets" / "sub" / "churn data.csv"
    data.parent.mkdir()
    data.write_text("a,b\n1,2\n")
    assert confine(str(data), home) == data.resolve()
    assert confine(f"  {data}\n", home) == data.resolve()
    assert confine(data.as_uri(), home) == data.resolve()  # file:///.../churn%20data.csv
    inner = home.home / "datasets" / "link.csv"
    inner.symlink_to(data)  # a link whose target is inside a root is fine
    assert confine(inner, home) == data.resolve()


def test_outside_paths_and_escapes_are_refused_with_where_datasets_may_live(home, secret):
    message = _refused(secret, home)
    assert f"the dataset {secret} is outside the data folders" in message
    assert str(home.home / "datasets") in message and "DAGSMITH_DATA_ROOTS" in message
    _refused(home.home / "datasets" / ".." / ".." / "outside" / "secret.csv", home)
    _refused(secret.as_uri(), home)
    _refused(f"file://elsewhere{secret}", home)
    assert "outside the data folders" in _refused("/etc/passwd", home)
    assert "outside the data folders" in _refused(home.home / "datasets" / "missing" / ".." / ".." / "x.csv", home)


def test_a_link_inside_a_root_to_a_file_outside_is_refused(home, secret):
    link = home.home / "datasets" / "innocent.csv"
    link.symlink_to(secret)
    assert "symbolic links followed" in _refused(link, home)
    folder = home.home / "datasets" / "folder"
    folder.symlink_to(secret.parent, target_is_directory=True)
    _refused(folder / "secret.csv", home)


def test_what_is_not_a_regular_file_is_refused_without_being_opened(home):
    datasets = home.home / "datasets"
    fifo = datasets / "pipe.csv"
    os.mkfifo(fifo)
    outcome: list[str] = []
    checker = threading.Thread(target=lambda: outcome.append(_refused(fifo, home)), daemon=True)
    checker.start()
    checker.join(timeout=10)  # opening a FIFO without a writer would block here
    assert not checker.is_alive() and "not a regular file" in outcome[0]
    assert "not a regular file" in _refused(datasets, home)
    (datasets / "sub").mkdir()
    assert "not a regular file" in _refused(datasets / "sub", home)
    assert "does not exist" in _refused(datasets / "nope.csv", home)
    assert "no dataset was named" in _refused("  ", home)
    loop = datasets / "loop.csv"
    loop.symlink_to(loop)
    _refused(loop, home)
    _refused(f"{datasets}/a\0b.csv", home)


def test_dagsmith_data_roots_adds_roots(home, tmp_path, secret, monkeypatch):
    other = tmp_path / "shared"
    other.mkdir()
    monkeypatch.setenv("DAGSMITH_HOME", str(home.home))
    monkeypatch.setenv("DAGSMITH_DATA_ROOTS", os.pathsep.join([str(other), "", str(secret.parent)]))
    settings = Settings.from_env()
    assert data_roots(settings) == [(home.home / "datasets").resolve(), other.resolve(), secret.parent.resolve()]
    assert confine(secret, settings) == secret.resolve()
    monkeypatch.setenv("DAGSMITH_DATA_ROOTS", str(other))
    _refused(secret, Settings.from_env())


def test_only_the_local_cli_environment_carries_the_mark_and_a_deployment_drops_it(home, monkeypatch):
    monkeypatch.setenv(LOCAL_CLI_VARIABLE, "1")  # inherited from an operator's shell: never trusted
    assert LOCAL_CLI_VARIABLE not in airflow_env(home)
    assert airflow_env(home, local_cli=True)[LOCAL_CLI_VARIABLE] == "1"
    served = LocalDeployment(home, metadata_url="postgresql+psycopg2://airflow@localhost/airflow")
    assert LOCAL_CLI_VARIABLE not in served.environment()
    assert Settings.from_env().local_cli
    monkeypatch.setenv(LOCAL_CLI_VARIABLE, "yes")
    assert not Settings.from_env().local_cli
