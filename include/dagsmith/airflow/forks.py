"""What a process that forks Airflow's tasks loads before it forks them, so that each task starts with it loaded.

The scheduler's LocalExecutor forks its workers as it starts and each task from a worker; a dagsmith Celery worker
forks its pool, and each task from a pool process. A task that imported dagsmith's task code itself would spend a
second or more on it, every task: about 1 s for the agents that plan (the build DAG's tasks) and the pipelines' task
code, 2.5 s for great-expectations, which profiling validates with, and the embedding model's weights, which a
goal in new words needs (0.2 s). Forked, a task finds them loaded. Nothing a fork must not share is left open here:
no connection, no file, but the hub of the local runtime's zygote, which every task shares by design: its steps are
forked from the zygote with the scientific stack imported (``runtime.warm``) instead of starting cold.
"""

from __future__ import annotations

import importlib
import logging

logger = logging.getLogger(__name__)
#: How long a forking process waits for the zygote's imports before it forks (once, as it starts).
ZYGOTE_SECONDS = 60.0
#: What the pipelines' tasks import as they run, beyond their modules' own imports: the database driver, Parquet,
#: the search's and the closing's modules (which the CLI imports only when it needs them). Imported in each task,
#: they were about a second of every task's time in a profiled deployment run.
RUN_TIME_MODULES = ("psycopg", "sqlalchemy.dialects.postgresql.psycopg", "pyarrow.dataset", "pyarrow.parquet",
                    "dagsmith.execution.search", "dagsmith.execution.closing", "dagsmith.execution.quality",
                    "dagsmith.execution.doubt", "dagsmith.execution.answer", "dagsmith.execution.contract",
                    "dagsmith.airflow.lineage", "dagsmith.runtime.local")


def load_task_code() -> None:
    """Import the build DAG's and the pipelines' task code (``RUN_TIME_MODULES`` too) and Airflow's macro plugins, as
    each task would, load the embedding model, and start the local runtime's zygote (``runtime.zygote``), waiting for
    its imports: a process forked before it is ready starts its steps cold."""
    from airflow.sdk.plugins_manager import integrate_macros_plugins

    from dagsmith.config import Settings
    from dagsmith.runtime import prestart

    zygote = prestart(Settings.from_env())  # its imports overlap these
    import dagsmith.airflow.meta_dag  # the planning agents
    import dagsmith.airflow.pipeline_dag  # noqa: F401 - the steps' operators
    from dagsmith.agents.profiler.quality import load_expectations
    from dagsmith.embeddings import shipped_model

    for name in RUN_TIME_MODULES:
        importlib.import_module(name)
    load_expectations()
    shipped_model().load()
    integrate_macros_plugins()  # what each task does first; cached, so a forked task finds it done
    if zygote is not None and not zygote.ready(timeout=ZYGOTE_SECONDS):
        logger.warning("steps start cold: the zygote of warm starts was not ready in %s s", ZYGOTE_SECONDS)
