"""A Celery worker of a dagsmith deployment: ``python -m dagsmith.airflow.worker [airflow celery worker options]``.

It is Airflow's own ``airflow celery worker``, started only once this worker sees the deployment's shared workspace
root (``execution.workers``): a worker without it would fail the first step whose input another worker wrote. The
refusal is one line on stderr and the error's exit code (3).

Airflow's CLI runs in this process, after it has loaded dagsmith's task code (``airflow.forks``): the worker's pool
processes fork from it, and each task forks from a pool process, so tasks start with it loaded, as they do under
dagsmith's scheduler (``airflow.scheduler``).
"""

from __future__ import annotations

import sys

from dagsmith.airflow.forks import load_task_code
from dagsmith.config import Settings
from dagsmith.errors import UserFacingError
from dagsmith.execution.workers import check_shared


def main(argv: list[str]) -> int:
    try:
        check_shared(Settings.from_env().workspaces_dir)
    except UserFacingError as exc:  # the root not shared, or a setting it cannot use
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    load_task_code()
    from airflow.__main__ import main as airflow

    sys.argv = ["airflow", "celery", "worker", *argv]
    airflow()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
