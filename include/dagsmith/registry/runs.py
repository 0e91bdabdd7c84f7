"""A completed run's model becomes a version of its pipeline (``execution.run.finish`` calls ``register_run``).

The run's model step's bundle is frozen (``dagsmith_kit.freeze``: file copies and JSON, nothing unpickled) beside
the raw table the run loaded; the first version is the champion, a later one a challenger that replaces it only when
it scores at least as well on the run's own held-out rows, the champion scored there by a sandboxed step. The
decision, with both scores and why, is added to the run's answer. Registering never fails the run: a model that
cannot be frozen is said in the trace and the log.

Imported by the executor on every DAG file parse, so the data stack loads only when a run registers.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import shutil
from pathlib import Path
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from dagsmith.config import Settings
from dagsmith.errors import UserFacingError
from dagsmith.models.catalog import Stage, TaskType
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from dagsmith.store.pipelines import steps_of
from dagsmith_kit import Bundle, BundleError

logger = logging.getLogger(__name__)
#: Stages whose step leaves the fitted model a version freezes.
MODEL_STAGES = (Stage.MODELLING, Stage.CLUSTERING, Stage.ANOMALY_DETECTION)


def register_run(execution_id: int, *, settings: Settings) -> dict[str, Any] | None:
    """Register the completed run's model as a version of its pipeline; its record, a note of why it was not, or
    None when the run fitted no model."""
    try:
        registered = _register(execution_id, settings)
    except (BundleError, OSError, ValueError, LookupError, UserFacingError, SQLAlchemyError) as exc:
        logger.warning("the model of execution %s was not registered as a version: %s", execution_id, exc)
        registered = {"error": f"not registered as a model version: {exc}"}
    if registered is not None and "error" not in registered:
        from dagsmith.registry.mlflow import log_version

        if (logged := log_version(settings, registered["pipeline_id"], registered["version"])) is not None:
            registered = {**registered, "mlflow": logged}
    if registered is not None:
        _tell(execution_id, registered, settings, _ahead(execution_id, registered, settings))
    return registered


def _ahead(execution_id: int, registered: dict[str, Any], settings: Settings) -> str | None:
    """For a forecast's new version, the forecast past the data in a sentence (``registry.ahead``); else None."""
    with session_scope(settings) as session:
        execution = session.get(schema.Execution, execution_id)
        pipeline = session.get(schema.Pipeline, execution.pipeline_id)
        if "error" in registered or pipeline.task_type != TaskType.TIME_SERIES_FORECASTING or not execution.workspace:
            return None
        target, workspace, trace = pipeline.target, Path(execution.workspace), dict(execution.trace)
    from dagsmith.registry.ahead import forecast_ahead

    return forecast_ahead(registered, target, workspace, trace, settings)


def _register(execution_id: int, settings: Settings) -> dict[str, Any] | None:
    with session_scope(settings) as session:
        execution = session.get(schema.Execution, execution_id)
        pipeline = session.get(schema.Pipeline, execution.pipeline_id)
        steps = [(s.position, s.stage) for s in steps_of(session, pipeline.id)]
        workspace, trace, task, pipeline_id = (Path(execution.workspace), dict(execution.trace), pipeline.task_type,
                                               pipeline.id)
    model_steps = [position for position, stage in steps if stage in MODEL_STAGES]
    if not model_steps:
        return None
    # Imported here: comparing with the champion loads scikit-learn, which a run without a model need not pay.
    from dagsmith.registry import champion, versions
    from dagsmith_kit.freeze import freeze

    bundle = Bundle.open(workspace / "steps" / f"{model_steps[-1]:02d}")
    loaded = Bundle.open(workspace / "steps" / f"{steps[0][0]:02d}")
    folder = versions.pipeline_folder(settings, pipeline_id)
    frozen = freeze(bundle.path, loaded.table("data"), folder / f".frozen-{secrets.token_hex(4)}",
                    id_columns=bundle.id_columns, target=bundle.target, task_type=task)
    try:
        metrics = (trace.get("quality") or {}).get("metrics") or {}
        compared = versions.champion_of(settings, pipeline_id)
        split = next((p for p, stage in steps if stage == Stage.SPLITTING), model_steps[-1])
        decision = champion.challenge(compared, metrics, workspace / "steps" / f"{split:02d}",
                                      classification=TaskType(task).classification, trace=trace, settings=settings)
        table_schema = json.loads((frozen / "schema.json").read_text(encoding="utf-8"))
        return versions.register(settings, pipeline_id, execution_id, frozen, decision, compared=compared,
                                 metrics=metrics, fingerprint=_fingerprint(workspace / "input"),
                                 table_schema=table_schema)
    except BaseException:  # compared or recorded, never left behind unrecorded
        shutil.rmtree(frozen, ignore_errors=True)
        raise


def _fingerprint(input_bundle: Path) -> str:
    """A digest of the dataset file the run was given (its copy in the run's input bundle)."""
    digest = hashlib.sha256()
    for source in sorted(input_bundle.glob("source*")):
        with open(source, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def _tell(execution_id: int, registered: dict[str, Any], settings: Settings, ahead: str | None) -> None:
    """The version (or why there is none) in the run's trace, its answer and ``answer.md``, after a forecast's
    forecast past the data."""
    from dagsmith.execution.answer import add_to_answer

    with session_scope(settings) as session:
        execution = session.get(schema.Execution, execution_id, with_for_update=True)
        execution.trace = {**execution.trace, "model_version": registered}
        add_to_answer(execution, f"{ahead} {version_sentence(registered)}" if ahead else version_sentence(registered))


def version_sentence(registered: dict[str, Any]) -> str:
    """What happened to the run's model, in one or two sentences."""
    if "error" in registered:
        return f"The model was {registered['error']}."
    from dagsmith.registry.mlflow import sentence

    decision, status = registered["decision"], ("now the champion" if registered["status"] == "champion"
                                                else "a challenger")
    return (f"The model is version {registered['version']}, {status}: {decision['reason']}. "
            f"{sentence(registered.get('mlflow'))}").strip()
