"""A Celery worker of a dagsmith deployment: ``python -m dagsmith.airflow.worker [airflow celery worker options]``.

It is Airflow's own ``airflow celery worker``, started only once this worker sees the deployment's shared workspace
root (``execution.workers``): a worker without it would fail the first step whose input another worker wrote. The
refusal is one line on stderr and the error's exit code (3).
"""

from __future__ import annotations

import os
import sys

from dagsmith.config import Settings
from dagsmith.errors import UserFacingError
from dagsmith.execution.workers import check_shared


def main(argv: list[str]) -> int:
    try:
        check_shared(Settings.from_env().workspaces_dir)
    except UserFacingError as exc:  # the root not shared, or a setting it cannot use
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    os.execv(sys.executable, [sys.executable, "-m", "airflow", "celery", "worker", *argv])
    return 0  # not reached: the worker replaces this process


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
