"""The ``dagsmith`` command. A local run's ``dag.test()`` child starts before the CLI's own imports (``ahead``), so
that Airflow gets ready in it a second sooner; then the CLI (``app``) runs the command."""

from __future__ import annotations

import sys
from typing import NoReturn

from dagsmith.cli.ahead import start_early


def main() -> NoReturn:
    start_early(sys.argv[1:])
    from dagsmith.cli.app import main as run_command_line  # the commands and what they import: after the start

    run_command_line()
