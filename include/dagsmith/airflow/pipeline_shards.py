"""Which pipeline specs one parse of a pipeline DAG file reads, so parsing stays fast as pipelines accumulate.

Building a pipeline's DAG costs milliseconds, and Airflow parses each DAG file again and again under a time
limit (``dagbag_import_timeout``, 30 s by default): one file for every pipeline would pass it at about ten
thousand pipelines, and a task start or ``dagsmith run`` would build them all to run one. So the specs are split
by pipeline id over ``SHARDS`` DAG files (``dags/dagsmith_pipelines_<shard>.py``), and a parse for one DAG
(Airflow's parsing context: a worker starting a task, ``dagsmith run``) reads that DAG's spec alone.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from dagsmith.execution.specs import pipeline_id_of, spec_file, spec_ids

#: The number of pipeline DAG files; ``dags/`` holds one per shard. More shards make each file's parse shorter,
#: but every file pays for importing dagsmith on each parse (see docs/benchmarks.md).
SHARDS = 8


def shard_of(pipeline_id: int) -> int:
    return pipeline_id % SHARDS


def dag_file_name(pipeline_id: int) -> str:
    """The file under ``dags/`` that defines a pipeline's DAG."""
    return f"dagsmith_pipelines_{shard_of(pipeline_id)}.py"


def shard_specs(folder: Path, shard: int, wanted_dag_id: str | None) -> list[Path]:
    """The spec files a parse of ``shard``'s DAG file reads: every one of its shard, or only ``wanted_dag_id``'s
    when Airflow parses for that DAG alone (none when that DAG is another file's)."""
    if not 0 <= shard < SHARDS:
        raise ValueError(f"pipeline DAG shard {shard} is not one of 0 to {SHARDS - 1}")
    if wanted_dag_id is not None:
        pipeline_id = pipeline_id_of(wanted_dag_id)
        ids = [pipeline_id] if pipeline_id is not None and shard_of(pipeline_id) == shard else []
    else:
        ids = [pipeline_id for pipeline_id in spec_ids(folder) if shard_of(pipeline_id) == shard]
    return [spec_file(folder, pipeline_id) for pipeline_id in ids]


def announce(pipeline_id: int, dags_folder: Path) -> None:
    """Mark a pipeline's DAG file as changed: the dag-processor parses changed files first, so a new pipeline's DAG
    is registered within seconds instead of at the file's next scheduled parse (``min_file_process_interval``,
    30 s by default). A read-only DAGs folder keeps that wait."""
    with contextlib.suppress(OSError):
        os.utime(dags_folder / dag_file_name(pipeline_id))
