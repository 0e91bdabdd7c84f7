"""The states Airflow's REST API reports for DAG runs and task instances, as far as dagsmith reads them, and what
passes between dagsmith's Airflow processes."""

from __future__ import annotations

from enum import StrEnum

#: The XCom of a pipeline DAG's ``finish`` task that holds the run's summary (``RunSummary``): its return value, also
#: pushed when the run failed.
SUMMARY_XCOM = "return_value"
#: The XCom of the build DAG's ``plan`` task that holds the question it asks about the goal (empty when none).
QUESTION_XCOM = "question"
#: Set (by ``airflow.run_child``) where a run's tasks run one at a time, as under ``dag.test()``: the pipeline DAG then
#: gives a model search's candidates one task, which fits them side by side (``execution.search.run_candidates``),
#: instead of a task each, which would run one after another.
ONE_AT_A_TIME_VARIABLE = "DAGSMITH_TASKS_ONE_AT_A_TIME"


class AirflowState(StrEnum):
    SUCCESS = "success"
    FAILED = "failed"
    UPSTREAM_FAILED = "upstream_failed"
    SKIPPED = "skipped"
    REMOVED = "removed"

    @classmethod
    def run_finished(cls, state: str | None) -> bool:
        """Whether a DAG run has ended (a run ends succeeded or failed)."""
        return state in (cls.SUCCESS, cls.FAILED)

    @classmethod
    def task_finished(cls, state: str | None) -> bool:
        """Whether a task instance is done for this run (no further try will start)."""
        return state in tuple(cls)
