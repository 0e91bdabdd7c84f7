"""Model versions mirrored into MLflow (``registry.mlflow``) on the real embedded PostgreSQL.

Without the package, or with the server down, a version and its promotions stand and say why MLflow was not told,
no credential of the tracking URI in the log or the database. Against a real ``mlflow server`` (opt-in:
``make test-mlflow`` starts one, scripts/local-mlflow.sh), each version is a run with its params, metrics and folder,
registered under ``dagsmith-pipeline-<id>`` with the alias ``champion`` following promotions and rollbacks.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import socket
import sys
import time
from pathlib import Path

import pytest

from dagsmith.config import Settings

from dagsmith.registry import mlflow as tracking
from dagsmith.registry import versions
from dagsmith.registry.versions import Decision
from dagsmith.store.db import session_scope
from tests.registry.conftest import register

SECRET = "s3cret-token-42"


def _closed_port() -> int:
    """A port nothing listens on (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _recorded(settings, pipeline_id: int, number: int) -> dict:
    with session_scope(settings) as session:
        return dict(versions.find(session, pipeline_id, number).mlflow)


def _no_secret_anywhere(settings, caplog, pipeline_id: int) -> None:
    assert SECRET not in caplog.text
    with session_scope(settings) as session:
        assert SECRET not in str([(r.mlflow, r.decision) for r in versions.versions(session, pipeline_id)])


def test_credentials_in_a_tracking_uri_are_never_shown(monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_TOKEN", "env-token-99")
    uri = f"https://alice:{SECRET}@mlflow.example.com/path?token=query-token-7"
    failure = f"API request to {uri}/api/2.0 failed; auth env-token-99; other http://bob:pw12@host/x"
    shown = tracking.redact(failure, uri)
    assert not any(secret in shown for secret in (SECRET, "query-token-7", "env-token-99", "pw12"))
    assert "mlflow.example.com" in shown and "***@host/x" in shown
    assert tracking.display_uri(uri) == "https://***@mlflow.example.com/path"
    assert tracking.display_uri("http://127.0.0.1:5000") == "http://127.0.0.1:5000"
    assert SECRET not in tracking.display_uri(f"https://{SECRET}@dbc.example.com")
    assert SECRET not in repr(Settings(home=Path("home"), database_url=None, mlflow_tracking_uri=uri))


def test_without_a_tracking_uri_nothing_is_logged(settings, pipeline):
    pipeline_id, run = pipeline
    assert register(settings, pipeline_id, run, Decision(True, "first"), ".a")["mlflow"] == {}
    register(settings, pipeline_id, run, Decision(False, "worse"), ".b")
    assert tracking.log_version(settings, pipeline_id, 2) is None
    assert versions.promote(settings, pipeline_id, 2, by="ana")["mlflow"] == {} == _recorded(settings, pipeline_id, 2)


def test_without_the_package_a_version_stands_and_says_why(settings, pipeline, monkeypatch, caplog):
    pipeline_id, run = pipeline
    monkeypatch.setitem(sys.modules, "mlflow", None)  # what an install without the extra gives: ImportError
    settings = dataclasses.replace(settings, mlflow_tracking_uri=f"http://alice:{SECRET}@127.0.0.1:{_closed_port()}")
    register(settings, pipeline_id, run, Decision(True, "first"), ".a")
    register(settings, pipeline_id, run, Decision(False, "worse"), ".b")
    with caplog.at_level(logging.WARNING):
        logged = tracking.log_version(settings, pipeline_id, 2)
        promoted = versions.promote(settings, pipeline_id, 2, by="bo")
    assert logged["error"] == "MLflow is not installed (the `mlflow` extra)"
    assert logged["tracking_uri"] == "http://***@127.0.0.1:" + logged["tracking_uri"].rsplit(":", 1)[1]
    assert promoted["status"] == "champion" and "not installed" in promoted["mlflow"]["error"]
    assert "not installed" in _recorded(settings, pipeline_id, 2)["error"]
    warnings = [r.getMessage() for r in caplog.records if r.name == tracking.__name__]
    assert len(warnings) == 2 and all("pip install 'dagsmith[mlflow]'" in w and "\n" not in w for w in warnings)
    _no_secret_anywhere(settings, caplog, pipeline_id)


@pytest.fixture
def client_package():
    return pytest.importorskip("mlflow", reason="the `mlflow` extra is not installed (make test-mlflow installs it)")


def test_a_server_down_or_a_uri_refused_costs_seconds_and_is_recorded(settings, pipeline, client_package, caplog):
    pipeline_id, run = pipeline
    settings = dataclasses.replace(settings, mlflow_tracking_uri=f"http://alice:{SECRET}@127.0.0.1:{_closed_port()}")
    register(settings, pipeline_id, run, Decision(True, "first"), ".a")
    started = time.monotonic()
    with caplog.at_level(logging.DEBUG):
        logged = tracking.log_version(settings, pipeline_id, 1)
    assert time.monotonic() - started < 20
    assert "ConnectionError" in logged["error"] or "Max retries" in logged["error"], logged
    assert _recorded(settings, pipeline_id, 1)["error"] == logged["error"]
    _no_secret_anywhere(settings, caplog, pipeline_id)
    assert (versions.pipeline_folder(settings, pipeline_id) / "v1" / "schema.json").is_file()  # the version stands
    unusable = dataclasses.replace(settings, mlflow_tracking_uri="bogus-scheme://x")  # the client refuses it
    assert "Unsupported" in tracking.log_version(unusable, pipeline_id, 1)["error"]


@pytest.fixture
def server(client_package) -> str:
    uri = os.environ.get("MLFLOW_TRACKING_URI")
    if not uri:
        pytest.skip("no MLflow server: make test-mlflow starts one (scripts/local-mlflow.sh)")
    return uri


def _alias(client, pipeline_id: int) -> str:
    return client.get_model_version_by_alias(tracking.model_name(pipeline_id), "champion").version


def test_versions_are_logged_registered_and_the_champion_alias_follows(settings, pipeline, client_package, server,
                                                                       tmp_path):
    pipeline_id, run = pipeline
    mlflow = client_package
    client = mlflow.MlflowClient(server)
    up = dataclasses.replace(settings, mlflow_tracking_uri=server)
    first = register(up, pipeline_id, run, Decision(True, "first"), ".a")
    logged = tracking.log_version(up, pipeline_id, 1)
    assert logged["model"] == f"dagsmith-pipeline-{pipeline_id}" and logged["model_version"] == "1", logged
    recorded = client.get_run(logged["run_id"]).data
    assert recorded.params == {"pipeline_id": str(pipeline_id), "version": "1", "task": "binary_classification"}
    assert recorded.metrics == {"roc_auc": 0.8} and recorded.tags["dagsmith.execution_id"] == str(run)
    copied = mlflow.artifacts.download_artifacts(run_id=logged["run_id"], artifact_path="version",
                                                 dst_path=str(tmp_path), tracking_uri=server)
    assert Path(copied, "schema.json").read_text() == Path(first["path"], "schema.json").read_text()
    assert _alias(client, pipeline_id) == "1"

    register(up, pipeline_id, run, Decision(False, "worse"), ".b")
    assert tracking.log_version(up, pipeline_id, 2)["model_version"] == "2" and _alias(client, pipeline_id) == "1"
    down = dataclasses.replace(settings, mlflow_tracking_uri=f"http://127.0.0.1:{_closed_port()}")
    register(down, pipeline_id, run, Decision(False, "worse"), ".c")
    assert "error" in tracking.log_version(down, pipeline_id, 3)  # made while the server was down

    assert versions.promote(up, pipeline_id, 2, by="bo")["mlflow"]["model_version"] == "2"
    assert _alias(client, pipeline_id) == "2"
    assert versions.rollback(up, pipeline_id, None, by="ana")["version"] == 1 and _alias(client, pipeline_id) == "1"
    promoted = versions.promote(up, pipeline_id, 3, by="ana")  # logged now, then crowned
    assert promoted["mlflow"]["model_version"] == "3" and _alias(client, pipeline_id) == "3"
    assert "error" not in _recorded(up, pipeline_id, 3)
    registered = client.search_model_versions(f"name='{tracking.model_name(pipeline_id)}'")
    assert sorted(v.version for v in registered) == ["1", "2", "3"]
