"""A pipeline's model versions and scorings as people read them: what ``dagsmith models`` prints and what the UI's
pipeline page and its REST twin show, read in one place so both say the same."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from dagsmith.registry import versions
from dagsmith.store import schema


def judged_score(metrics: dict[str, Any]) -> str:
    """The held-out metric the version's run is judged by, with its value ('' when it has none)."""
    from dagsmith.execution.quality import judged_metric  # scikit-learn, loaded only to list

    judged = judged_metric(metrics)
    return f"{judged[0]} {metrics[judged[0]]:.4f}" if judged else ""


def listed(session: Session, pipeline_id: int) -> list[dict[str, Any]]:
    """Every version of the pipeline's model, oldest first: its record, its score and why it has its status."""
    return [{**versions.version_row(r), "reason": r.decision.get("reason"), "score": judged_score(r.metrics)}
            for r in versions.versions(session, pipeline_id)]


def scorings(session: Session, pipeline_id: int, *, limit: int, version_id: int | None = None) -> list[dict[str, Any]]:
    """The pipeline's latest scoring runs (of one version when ``version_id`` is given), latest first, each with the
    version that scored, the rows, and the drift (PSI) per feature."""
    query = (select(schema.ScoringRun, schema.ModelVersion.version)
             .join(schema.ModelVersion, schema.ScoringRun.version_id == schema.ModelVersion.id)
             .where(schema.ModelVersion.pipeline_id == pipeline_id))
    if version_id is not None:
        query = query.where(schema.ScoringRun.version_id == version_id)
    return [{"version": number, "at": s.created_at.isoformat(timespec="seconds"), "owner": s.owner,
             "dataset": s.dataset, "output": s.output, "rows": s.rows, "drifted": s.drifted,
             "drift": {c: v.get("psi") for c, v in ((s.report.get("drift") or {}).get("columns") or {}).items()}}
            for s, number in session.execute(query.order_by(schema.ScoringRun.id.desc()).limit(limit))]
