"""Running a stored pipeline: the lifecycle of one run.

Airflow calls these from a pipeline's child DAG: ``start`` creates the execution and its workspace, each step's
task runs its tries (``execution.attempts``), healing between them (``healing.policy``), and ``finish`` closes the
run (``execution.finish``); ``abandon`` fails a run whose Airflow run ended before that. Everything is recorded in
PostgreSQL; files live in the execution's workspace.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from pathlib import Path

from dagsmith.config import Settings
from dagsmith.data.staging import loadable
from dagsmith.execution.reaper import fail_run, reap
from dagsmith.models.execution import StepStatus
from dagsmith.models.plan import PipelineStatus
from dagsmith.store import schema
from dagsmith.store.db import session_scope, stored
from dagsmith.store.pipelines import steps_of
from dagsmith_kit import Bundle


def abandon(execution_id: int, reason: str, *, settings: Settings) -> None:
    """Fail a run still open once its Airflow run is over (it ended before ``finish``): nothing is left running."""
    with session_scope(settings) as session:
        run = stored(session, schema.Execution, execution_id, with_for_update=True)
        if run.status == PipelineStatus.RUNNING:
            fail_run(session, run, datetime.now(UTC), reason)


def start(pipeline_id: int, dataset: str, *, user: str, run_id: str | None, settings: Settings) -> int:
    """Create the execution, its isolated workspace with a copy of the dataset, and reset the steps (after closing
    what dead workers left running, so nothing stays 'running' forever)."""
    reap(settings)
    source = Path(dataset)
    if not source.is_file():
        raise FileNotFoundError(f"the dataset {dataset} does not exist")
    with session_scope(settings) as session:
        pipeline = session.get(schema.Pipeline, pipeline_id)
        if pipeline is None:
            raise LookupError(f"no pipeline {pipeline_id}")
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        root = settings.workspaces_dir / f"pipeline-{pipeline_id}-{stamp}-{secrets.token_hex(3)}"  # never shared
        roles = pipeline.plan.get("roles", {})
        bundle = Bundle.create(root / "input", target=pipeline.target, task_type=pipeline.task_type,
                               id_columns=roles.get("id_columns"), time_column=roles.get("time_column"),
                               excluded_columns=roles.get("excluded_columns"))
        with loadable(source) as table:
            bundle.add_source(table)
        execution = schema.Execution(pipeline_id=pipeline_id, owner=user, status=PipelineStatus.RUNNING,
                                     dataset=str(source), workspace=str(root), airflow_run_id=run_id, trace={})
        session.add(execution)
        pipeline.status = PipelineStatus.RUNNING
        for step in steps_of(session, pipeline_id):
            step.status = StepStatus.PENDING
        session.flush()
        return execution.id
