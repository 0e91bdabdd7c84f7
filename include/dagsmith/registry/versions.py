"""The ``model_versions`` records: numbering, the champion rule's outcome, promotion and rollback by hand.

A version is its folder under the model root and its row, never one without the other: the frozen folder is renamed
to its numbered place inside the transaction that inserts the row (the pipeline's row locked, so numbers never
collide), and removed again when that transaction fails.
"""

from __future__ import annotations

import shutil
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from dagsmith.config import Settings
from dagsmith.errors import InputError
from dagsmith.registry.mlflow import champion_moved
from dagsmith.store import schema
from dagsmith.store.db import session_scope

CHAMPION, CHALLENGER, RETIRED = schema.MODEL_STATUSES
RULE = "dagsmith"  # who decided a status the champion rule gave


@dataclass(frozen=True)
class Decision:
    """The champion rule's verdict on a new version: the metric, both scores on the same held-out rows, why."""

    promote: bool
    reason: str
    metric: str | None = None
    challenger_score: float | None = None
    champion_score: float | None = None
    champion_version: int | None = None

    def stored(self, by: str = RULE) -> dict[str, Any]:
        return {**asdict(self), "by": by, "at": datetime.now(UTC).isoformat(timespec="seconds")}


@dataclass(frozen=True)
class Champion:
    """What a challenger is compared with, read before the comparison (which runs outside any transaction)."""

    id: int
    version: int
    path: Path
    metrics: dict[str, Any]


def pipeline_folder(settings: Settings, pipeline_id: int) -> Path:
    return settings.models_dir / f"pipeline-{pipeline_id}"


def champion_of(settings: Settings, pipeline_id: int) -> Champion | None:
    with session_scope(settings) as session:
        row = session.scalar(select(schema.ModelVersion).where(schema.ModelVersion.pipeline_id == pipeline_id,
                                                                schema.ModelVersion.status == CHAMPION))
        return Champion(row.id, row.version, Path(row.path), dict(row.metrics)) if row else None


def register(settings: Settings, pipeline_id: int, execution_id: int | None, frozen: Path, decision: Decision, *,
             compared: Champion | None, metrics: dict[str, Any], fingerprint: str,
             table_schema: dict[str, Any]) -> dict:
    """Number the frozen folder ``frozen`` as the pipeline's next version and record it: champion when it is the first
    or ``decision`` promotes it over ``compared`` (still the champion), else challenger. Returns the row as a dict."""
    final: Path | None = None
    try:
        with session_scope(settings) as session:
            if session.get(schema.Pipeline, pipeline_id, with_for_update=True) is None:  # numbers one at a time
                raise LookupError(f"no pipeline {pipeline_id}")
            number = (session.scalar(select(func.max(schema.ModelVersion.version))
                                     .where(schema.ModelVersion.pipeline_id == pipeline_id)) or 0) + 1
            current = _champion(session, pipeline_id)
            if current is not None and (compared is None or current.id != compared.id):
                decision = Decision(False, f"the champion became v{current.version} while this version was compared "
                                           f"with {f'v{compared.version}' if compared else 'none'}; compare again "
                                           "and promote by hand", champion_version=current.version)
            final = pipeline_folder(settings, pipeline_id) / f"v{number}"
            frozen.rename(final)
            row = schema.ModelVersion(pipeline_id=pipeline_id, version=number, execution_id=execution_id,
                                      status=CHALLENGER, metrics=metrics, fingerprint=fingerprint,
                                      schema=table_schema, path=str(final), decision=decision.stored())
            session.add(row)
            if current is None or decision.promote:
                _crown(session, row, current)
            session.flush()
            return version_row(row)
    except BaseException:
        shutil.rmtree(final or frozen, ignore_errors=True)
        raise


def _champion(session: Session, pipeline_id: int) -> schema.ModelVersion | None:
    return session.scalar(select(schema.ModelVersion).where(schema.ModelVersion.pipeline_id == pipeline_id,
                                                            schema.ModelVersion.status == CHAMPION)
                          .with_for_update())


def _crown(session: Session, row: schema.ModelVersion, current: schema.ModelVersion | None) -> None:
    """``row`` becomes the champion; the one it replaces retires (flushed first: one champion at a time)."""
    if current is not None and current.id != row.id:
        current.status = RETIRED
        session.flush()
    row.status = CHAMPION
    row.decision = {**row.decision, "replaced": current.version if current is not None else None}


def version_row(row: schema.ModelVersion) -> dict[str, Any]:
    return {"pipeline_id": row.pipeline_id, "version": row.version, "status": row.status,
            "execution_id": row.execution_id, "metrics": row.metrics, "fingerprint": row.fingerprint,
            "path": row.path, "created_at": row.created_at.isoformat(timespec="seconds") if row.created_at else None,
            "decision": row.decision, "mlflow": row.mlflow}


def versions(session: Session, pipeline_id: int) -> list[schema.ModelVersion]:
    return list(session.scalars(select(schema.ModelVersion).where(schema.ModelVersion.pipeline_id == pipeline_id)
                                .order_by(schema.ModelVersion.version)))


def find(session: Session, pipeline_id: int, number: int | None) -> schema.ModelVersion:
    """Version ``number`` of the pipeline, or its champion; an ``InputError`` naming what exists otherwise."""
    rows = versions(session, pipeline_id)
    if not rows:
        raise InputError(f"pipeline {pipeline_id} has no model versions yet: a completed run of it makes one")
    found = next((r for r in rows if r.version == number or (number is None and r.status == CHAMPION)), None)
    if found is None:
        raise InputError(f"pipeline {pipeline_id} has no {f'version {number}' if number else 'champion'}; its "
                         f"versions: {', '.join(str(r.version) for r in rows)}")
    return found


def promote(settings: Settings, pipeline_id: int, number: int, *, by: str, reason: str | None = None) -> dict:
    """Make version ``number`` the champion by hand; the champion it replaces retires."""
    with session_scope(settings) as session:
        session.get(schema.Pipeline, pipeline_id, with_for_update=True)
        row = find(session, pipeline_id, number)
        if row.status == CHAMPION:
            raise InputError(f"version {number} of pipeline {pipeline_id} is already the champion")
        current = _champion(session, pipeline_id)
        row.decision = {**_history(row), "promote": True, "by": by,
                        "reason": reason or f"promoted by hand over v{current.version if current else '-'}",
                        "at": datetime.now(UTC).isoformat(timespec="seconds")}
        _crown(session, row, current)
        session.flush()
        promoted = version_row(row)
    if (logged := champion_moved(settings, pipeline_id, number)) is not None:
        promoted["mlflow"] = logged
    return promoted


def rollback(settings: Settings, pipeline_id: int, number: int | None, *, by: str) -> dict:
    """Bring back the champion the current one replaced (or version ``number``); the current one retires."""
    with session_scope(settings) as session:
        session.get(schema.Pipeline, pipeline_id, with_for_update=True)
        current = find(session, pipeline_id, None)
        number = number or current.decision.get("replaced")
        if not number:
            raise InputError(f"v{current.version} of pipeline {pipeline_id} replaced no champion: there is nothing "
                             "to roll back to (name a version to promote one)")
    return promote(settings, pipeline_id, int(number), by=by, reason=f"rolled back from v{current.version} by hand")


def _history(row: schema.ModelVersion) -> dict[str, Any]:
    """``row``'s decision with its current verdict kept in its history, for the next verdict to replace it."""
    earlier = {k: v for k, v in row.decision.items() if k != "history"}
    return {"history": [*row.decision.get("history", []), earlier]}
