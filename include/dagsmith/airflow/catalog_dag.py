"""The catalog-indexing DAG: sync a folder of microservices into the catalog, on demand or on a schedule."""

from __future__ import annotations

import logging
from pathlib import Path

from airflow.sdk import DAG, Param, task
from airflow.sdk.exceptions import AirflowFailException

from dagsmith.airflow.ownership import everyone
from dagsmith.catalog.upload import sync
from dagsmith.models.catalog import UploadOutcome

DAG_ID = "dagsmith_catalog_sync"
log = logging.getLogger(__name__)


def build(default_directory: str | Path, schedule: str | None = None) -> DAG:
    """A DAG with one task that indexes ``directory`` (a run parameter) and reports what changed."""
    with DAG(
        dag_id=DAG_ID,
        schedule=schedule,
        catchup=False,
        tags=["dagsmith", "catalog"],
        doc_md=__doc__,
        access_control=everyone(),  # under FAB: every login sees it, those who may build trigger it
        params={
            "directory": Param(str(default_directory), type="string",
                               description="Folder holding one sub-folder per microservice."),
        },
    ) as dag:

        @task(task_id="sync_catalog")
        def sync_catalog(params: dict | None = None) -> dict:
            """Validate, analyse, embed and store new or changed microservices.

            Every acceptable service is indexed first; the task then fails if any upload was rejected, so the
            rejection shows in the Airflow UI (with every reason in the log) instead of passing unnoticed.
            """
            results = sync(params["directory"], progress=log.info)
            for result in results:
                if result.outcome is UploadOutcome.REJECTED:
                    log.warning("rejected %s: %s", result.name, "; ".join(str(f) for f in result.findings))
            summary = {o.value: sorted(r.name for r in results if r.outcome is o) for o in UploadOutcome}
            log.info("catalog sync: %s", {k: len(v) for k, v in summary.items()})
            if summary[UploadOutcome.REJECTED.value]:
                raise AirflowFailException(
                    f"{len(summary['rejected'])} microservice(s) rejected: {', '.join(summary['rejected'])}; "
                    "the others were indexed")
            return summary

        sync_catalog()
    return dag
