"""Index the microservice catalog (thin DAG file: the DAG is built in dagsmith.airflow.catalog_dag)."""

import os
from pathlib import Path

from dagsmith.airflow.catalog_dag import build

dag = build(
    default_directory=os.environ.get("DAGSMITH_CATALOG_DIR",
                                     str(Path(__file__).resolve().parents[1] / "microservices")),
    schedule=os.environ.get("DAGSMITH_CATALOG_SCHEDULE") or None,
)
