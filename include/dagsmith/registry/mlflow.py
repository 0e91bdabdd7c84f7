"""Model versions mirrored into MLflow when ``MLFLOW_TRACKING_URI`` is set: each version a run of the experiment
``dagsmith-pipeline-<id>`` (params: pipeline, version, task; metrics: the held-out ones; artifacts: the version
folder) and a version of the registered model of the same name, the champion under the alias ``champion``.

dagsmith's own record stays the truth: MLflow is told after the version is committed, and nothing MLflow does (not
installed, server down, refused) fails a run or a promotion. What happened is kept in the version's ``mlflow`` field
and the log, with any credential in the tracking URI or MLflow's variables replaced by ``***``. The client is the
optional ``mlflow`` extra (``mlflow-skinny``), imported only when a version is logged.
"""

from __future__ import annotations

import logging
import math
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from dagsmith.config import MLFLOW_VARIABLE, Settings
from dagsmith.store import schema
from dagsmith.store.db import session_scope

logger = logging.getLogger(__name__)
CHAMPION_ALIAS = "champion"
#: Where a version's folder goes among its run's artifacts (the registered version's source).
ARTIFACT_PATH = "version"
#: MLflow retries a request 7 times over minutes by default; a server that is down should cost a run seconds.
#: Variables the user set win.
HTTP_DEFAULTS = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2", "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
                 "MLFLOW_HTTP_REQUEST_TIMEOUT": "30"}
#: MLflow's variables that hold credentials, besides those in the URI itself.
SECRET_VARIABLES = ("MLFLOW_TRACKING_TOKEN", "MLFLOW_TRACKING_PASSWORD")
_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")


def model_name(pipeline_id: int) -> str:
    """The MLflow experiment and registered model of a pipeline."""
    return f"dagsmith-pipeline-{pipeline_id}"


def log_version(settings: Settings, pipeline_id: int, number: int) -> dict[str, Any] | None:
    """Log a committed version to MLflow and register it, the alias ``champion`` on it when it is the champion.
    Returns what is recorded on the version, or None without ``MLFLOW_TRACKING_URI``."""
    if not settings.mlflow_tracking_uri:
        return None
    return _record(settings, pipeline_id, number, lambda client: _logged(client, settings, pipeline_id, number))


def champion_moved(settings: Settings, pipeline_id: int, number: int) -> dict[str, Any] | None:
    """Move the alias ``champion`` to version ``number`` after a promotion or rollback, logging the version first when
    MLflow does not have it yet (it was made while the server was down, or before MLflow was configured)."""
    if not settings.mlflow_tracking_uri:
        return None

    def move(client) -> dict[str, Any]:
        with session_scope(settings) as session:
            known = dict(_row(session, pipeline_id, number).mlflow)
        record = known if "model_version" in known else _logged(client, settings, pipeline_id, number)
        client.set_registered_model_alias(record["model"], CHAMPION_ALIAS, record["model_version"])
        return record

    return _record(settings, pipeline_id, number, move)


def sentence(record: dict[str, Any] | None) -> str:
    """What became of a version in MLflow, for the run's answer and the CLI; empty when MLflow is not configured."""
    if not record:
        return ""
    if "error" in record:
        return f"MLflow at {record.get('tracking_uri')} was not told: {record['error']}."
    return f"In MLflow it is version {record['model_version']} of {record['model']} (run {record['run_id']})."


def _record(settings: Settings, pipeline_id: int, number: int, action) -> dict[str, Any]:
    """Run ``action`` with a client and keep its outcome (or the failure, redacted) on the version."""
    uri = settings.mlflow_tracking_uri or ""
    try:
        outcome = action(_client(uri))
    except ImportError:
        logger.warning("%s is set but MLflow is not installed (pip install 'dagsmith[mlflow]'): model version %s of "
                       "pipeline %s is not logged to MLflow", MLFLOW_VARIABLE, number, pipeline_id)
        outcome = {"error": "MLflow is not installed (the `mlflow` extra)"}
    except Exception as exc:  # noqa: BLE001 - MLflow is a mirror: whatever it raises, the version stands
        reason = redact(f"{type(exc).__name__}: {exc}", uri).strip().splitlines()[0][:500]
        logger.warning("model version %s of pipeline %s was not logged to MLflow at %s: %s", number, pipeline_id,
                       display_uri(uri), reason)
        outcome = {"error": reason}
    outcome = {**outcome, "tracking_uri": display_uri(uri), "at": datetime.now(UTC).isoformat(timespec="seconds")}
    try:
        with session_scope(settings) as session:
            row = _row(session, pipeline_id, number)
            kept = {key: row.mlflow[key] for key in ("run_id", "model", "model_version") if key in row.mlflow}
            row.mlflow = {**kept, **outcome} if "error" in outcome else outcome
    except (SQLAlchemyError, LookupError) as exc:  # the database, or the version went meanwhile
        logger.warning("could not record on model version %s of pipeline %s what MLflow made of it: %s", number,
                       pipeline_id, type(exc).__name__)
    return outcome


def _client(uri: str):
    for variable, value in HTTP_DEFAULTS.items():
        os.environ.setdefault(variable, value)
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=uri, registry_uri=uri)


def _logged(client, settings: Settings, pipeline_id: int, number: int) -> dict[str, Any]:
    """A run with the version's params, metrics and folder, registered as a version of the pipeline's model."""
    from mlflow.entities import Metric, Param, RunStatus
    from mlflow.exceptions import MlflowException

    with session_scope(settings) as session:
        row = _row(session, pipeline_id, number)
        task = session.get(schema.Pipeline, pipeline_id).task_type
        status, metrics, folder = row.status, dict(row.metrics), Path(row.path)
        tags = {"dagsmith.pipeline_id": str(pipeline_id), "dagsmith.version": str(number),
                "dagsmith.execution_id": str(row.execution_id), "dagsmith.fingerprint": row.fingerprint}
        reason = str(row.decision.get("reason", ""))
    name = model_name(pipeline_id)
    experiment = client.get_experiment_by_name(name)
    experiment_id = (experiment.experiment_id if experiment else
                     _unless_made(lambda: client.create_experiment(name), MlflowException)
                     or client.get_experiment_by_name(name).experiment_id)
    run = client.create_run(experiment_id, run_name=f"v{number}", tags=tags)
    run_id = run.info.run_id
    try:
        at = int(datetime.now(UTC).timestamp() * 1000)
        client.log_batch(run_id, params=[Param("pipeline_id", str(pipeline_id)), Param("version", str(number)),
                                         Param("task", task)],
                         metrics=[Metric(key, float(value), at, 0) for key, value in _numbers(metrics).items()])
        client.log_artifacts(run_id, str(folder), ARTIFACT_PATH)
        _unless_made(lambda: client.create_registered_model(name), MlflowException)
        registered = client.create_model_version(name, f"{run.info.artifact_uri}/{ARTIFACT_PATH}", run_id=run_id,
                                                 tags=tags, description=reason or None)
        if status == "champion":
            client.set_registered_model_alias(name, CHAMPION_ALIAS, registered.version)
    except BaseException:
        _quietly(lambda: client.set_terminated(run_id, RunStatus.to_string(RunStatus.FAILED)))
        raise
    client.set_terminated(run_id)
    return {"run_id": run_id, "model": name, "model_version": str(registered.version)}


def _unless_made(create, error: type[Exception]):
    """What ``create()`` returns, or None when what it creates exists already (another run made it first)."""
    try:
        return create()
    except error as exc:
        if getattr(exc, "error_code", None) != "RESOURCE_ALREADY_EXISTS":
            raise
        return None


def _quietly(action) -> None:
    try:
        action()
    except Exception as exc:  # noqa: BLE001 - the failure being reported is the first one
        logger.debug("MLflow cleanup failed: %s", type(exc).__name__)


def _numbers(metrics: dict[str, Any]) -> dict[str, float]:
    """The metrics MLflow can hold: finite numbers, under keys of the characters it allows."""
    return {re.sub(r"[^\w\-. /]", "_", key): float(value) for key, value in metrics.items()
            if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)}


def _row(session: Session, pipeline_id: int, number: int) -> schema.ModelVersion:
    row = session.scalar(select(schema.ModelVersion).where(schema.ModelVersion.pipeline_id == pipeline_id,
                                                           schema.ModelVersion.version == number))
    if row is None:
        raise LookupError(f"pipeline {pipeline_id} has no version {number}")
    return row


def secrets_in(uri: str) -> list[str]:
    """The credentials a tracking URI and MLflow's variables hold: the URI's password (or its user name when that is
    all it has: a token) and query values."""
    parts = urlsplit(uri)
    found = [parts.password or parts.username, *(value for _, value in parse_qsl(parts.query))]
    found += [os.environ.get(variable) for variable in SECRET_VARIABLES]
    return sorted({value for value in found if value and len(value) >= 3}, key=len, reverse=True)


def redact(text: str, uri: str) -> str:
    """``text`` with every credential of ``uri`` (and of any URL's user information) replaced by ``***``."""
    for secret in secrets_in(uri):
        text = text.replace(secret, "***")
    return _USERINFO.sub("***@", text)


def display_uri(uri: str) -> str:
    """The tracking URI as it may be shown and stored: no user information, no query."""
    parts = urlsplit(uri)
    host = parts.netloc.rpartition("@")[2]
    return f"{parts.scheme}://{'***@' if '@' in parts.netloc else ''}{host}{parts.path}" if parts.scheme else uri
