"""What a pipeline reads and produces, as Airflow Assets: data-aware retraining and lineage Airflow can show.

A pipeline's input is the asset of its dataset file (``file://`` and the path), so every pipeline on the same
file shares it. A pipeline scheduled ``on new data`` runs whenever an event updates that asset: an upstream
DAG that lists it in its outlets, or ``POST /api/v2/assets/events`` from another system. An event may name a
newer file in its extra (``{"dataset": "/data/churn-2026-12.csv"}``), held to the data roots like any run's
dataset. Each completed run emits its model and its predictions as assets, with the execution, the dataset and
the held-out metrics in the event's extra, so downstream DAGs can wait for a fresh model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from airflow.sdk import Asset

from dagsmith.models.execution import RunSummary
from dagsmith.models.plan import ON_NEW_DATA, DagSpec

#: The key of an asset event's extra that names the file a triggered run reads.
DATASET_KEY = "dataset"


def dataset_asset(dataset: str) -> Asset:
    return Asset(uri=Path(dataset).resolve().as_uri())


def model_asset(pipeline_id: int) -> Asset:
    return Asset(name=f"dagsmith_pipeline_{pipeline_id}_model", uri=f"dagsmith://pipelines/{pipeline_id}/model")


def predictions_asset(pipeline_id: int) -> Asset:
    return Asset(name=f"dagsmith_pipeline_{pipeline_id}_predictions",
                 uri=f"dagsmith://pipelines/{pipeline_id}/predictions")


def scored_asset(pipeline_id: int) -> Asset:
    """The predictions a pipeline's scoring DAG wrote for new rows (``airflow.scoring_dag``)."""
    return Asset(name=f"dagsmith_pipeline_{pipeline_id}_scored", uri=f"dagsmith://pipelines/{pipeline_id}/scored")


def incoming_asset(pipeline_id: int) -> Asset:
    """New rows to score: an event on it (its extra naming the file, ``{"dataset": ...}``) runs the scoring DAG."""
    return Asset(name=f"dagsmith_pipeline_{pipeline_id}_incoming", uri=f"dagsmith://pipelines/{pipeline_id}/incoming")


def schedule_for(spec: DagSpec, source: Asset) -> Any:
    """The DAG's schedule: its dataset's asset (``source``) for ``on new data``, else the spec's cron expression
    (or none)."""
    return [source] if spec.schedule == ON_NEW_DATA else spec.schedule


def triggered_dataset(events: Any) -> str | None:
    """The newest file an asset event that triggered this run names in its extra, if any."""
    named = [event for queue in (events or {}).values() for event in queue
             if isinstance((event.extra or {}).get(DATASET_KEY), str)]
    return named[-1].extra[DATASET_KEY] if named else None


def produced(summary: RunSummary) -> dict[str, Any]:
    """The extra of a completed run's model and predictions events: which run, on what, how good (held out)."""
    return {"execution_id": summary.execution_id, "dataset": summary.dataset, "workspace": summary.workspace,
            "metrics": (summary.quality or {}).get("metrics", {})}
