"""What the registry's tests share: a pipeline with a completed run, and versions registered for it as ``freeze``
would leave them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagsmith.registry import versions
from dagsmith.registry.versions import Decision
from dagsmith.store import schema
from dagsmith.store.db import session_scope


@pytest.fixture
def pipeline(settings) -> tuple[int, int]:
    """A pipeline and one completed run of it."""
    with session_scope(settings) as session:
        row = schema.Pipeline(name="churn", goal="predict churn", owner="ana", dataset="churn.csv",
                              task_type="binary_classification", target="churn")
        session.add(row)
        session.flush()
        run = schema.Execution(pipeline_id=row.id, owner="ana", status="completed", dataset="churn.csv", trace={})
        session.add(run)
        session.flush()
        return row.id, run.id


def frozen(settings, pipeline_id: int, name: str) -> Path:
    """A folder as ``freeze`` leaves it, beside the pipeline's versions."""
    folder = versions.pipeline_folder(settings, pipeline_id) / name
    folder.mkdir(parents=True)
    (folder / "schema.json").write_text(json.dumps({"features": [{"name": "tenure"}]}))
    return folder


def register(settings, pipeline_id: int, execution_id: int | None, decision: Decision, name: str) -> dict:
    return versions.register(settings, pipeline_id, execution_id, frozen(settings, pipeline_id, name), decision,
                             compared=versions.champion_of(settings, pipeline_id), metrics={"roc_auc": 0.8},
                             fingerprint="f" * 64, table_schema={"features": [{"name": "tenure"}]})
