"""The scheduler of a dagsmith deployment: ``python -m dagsmith.airflow.scheduler [airflow scheduler options]``.

It is Airflow's own ``airflow scheduler``, run in this process once dagsmith's task code is loaded
(``airflow.forks``): its LocalExecutor forks the workers that fork each task, so a task starts with the agents and
great-expectations loaded instead of importing them, which on the build DAG was most of a planning task's time.
Under ``airflow scheduler`` itself everything works the same, each task a few seconds slower.
"""

from __future__ import annotations

import sys

from dagsmith.airflow.forks import load_task_code


def main(argv: list[str]) -> None:
    load_task_code()
    from airflow.__main__ import main as airflow

    sys.argv = ["airflow", "scheduler", *argv]
    airflow()


if __name__ == "__main__":
    main(sys.argv[1:])
