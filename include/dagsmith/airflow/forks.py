"""What a process that forks Airflow's tasks loads before it forks them, so that each task starts with it loaded.

The scheduler's LocalExecutor forks its workers as it starts and each task from a worker; a dagsmith Celery worker
forks its pool, and each task from a pool process. A task that imported dagsmith's task code itself would spend a
second or more on it, every task: about 1 s for the agents that plan (the build DAG's tasks) and the pipelines' task
code, 2.5 s for great-expectations, which profiling validates with, and the embedding model's weights, which a
goal in new words needs (0.2 s). Forked, a task finds them loaded. Nothing a fork must not share is left open here:
no connection, no file.
"""

from __future__ import annotations


def load_task_code() -> None:
    """Import the build DAG's and the pipelines' task code and Airflow's macro plugins, as each task would, and load
    the embedding model."""
    from airflow.sdk.plugins_manager import integrate_macros_plugins

    import dagsmith.airflow.meta_dag  # the planning agents
    import dagsmith.airflow.pipeline_dag  # noqa: F401 - the steps' operators
    from dagsmith.agents.profiler.quality import load_expectations
    from dagsmith.embeddings import shipped_model

    load_expectations()
    shipped_model().load()
    integrate_macros_plugins()  # what each task does first; cached, so a forked task finds it done
