"""The ``dagsmith`` command. Sub-commands live in modules named for what they manage."""

from __future__ import annotations

import sys

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


def main() -> None:
    """Entry point: user-facing failures print one clear message and exit non-zero, never a traceback."""
    try:
        app()
    except ConfigurationError as exc:
        fail(f"configuration: {exc}", code=exc.exit_code)
    except UserFacingError as exc:
        fail(str(exc), code=exc.exit_code)
    except KeyboardInterrupt:
        fail("interrupted", code=130)


if __name__ == "__main__":
    sys.exit(main())
