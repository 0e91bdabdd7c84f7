"""The ``dagsmith`` command. Sub-commands live in modules named for what they manage."""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from typing import NoReturn

import typer

from dagsmith.cli import catalog, datasets, db, models, pipelines
from dagsmith.cli.bench import bench_command
from dagsmith.cli.output import fail
from dagsmith.cli.plan import plan_command
from dagsmith.cli.predict import predict_command
from dagsmith.cli.profile import profile
from dagsmith.cli.run import run_command
from dagsmith.cli.serve import serve_command
from dagsmith.config import ConfigurationError
from dagsmith.errors import UserFacingError

app = typer.Typer(
    name="dagsmith",
    help="Turn a dataset and a goal in plain language into an executed, explainable ML pipeline on Airflow.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(catalog.app, name="catalog")
app.add_typer(db.app, name="db")
app.add_typer(datasets.app, name="datasets")
app.add_typer(pipelines.app, name="pipelines")
app.add_typer(models.app, name="models")
app.command("profile")(profile)
app.command("plan")(plan_command)
app.command("run")(run_command)
app.command("predict")(predict_command)
app.command("bench")(bench_command)
app.command("serve")(serve_command)


def main() -> NoReturn:
    """Entry point: user-facing failures print one clear message and exit non-zero, never a traceback."""
    try:
        try:
            app()
        except ConfigurationError as exc:
            fail(f"configuration: {exc}", code=exc.exit_code)
        except UserFacingError as exc:
            fail(str(exc), code=exc.exit_code)
        except KeyboardInterrupt:
            fail("interrupted", code=130)
    except SystemExit as ended:
        _exit_at_once(ended.code)
    _exit_at_once(0)


def _exit_at_once(code: int | str | None) -> NoReturn:
    """End the command as soon as what it started is done and its exit hooks have run (the embedded database
    stopped when this was its last user, logs flushed). The interpreter's own teardown of everything imported
    (pandas, scikit-learn, SQLAlchemy, ...) would otherwise take over a second after a run's results were printed,
    while the prompt waited; it frees memory the process no longer needs."""
    if isinstance(code, str):  # sys.exit("message"): printed, and a failure
        print(code, file=sys.stderr)
        code = 1
    for thread in threading.enumerate():  # as the interpreter does before its exit hooks
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()  # the hooks sys.exit would run: Python has no public way to run them
    with contextlib.suppress(BrokenPipeError):  # the reader went away (`dagsmith ... | head`): nobody to tell
        sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)


if __name__ == "__main__":
    main()
