"""``dagsmith serve``: dagsmith's DAGs in a running Airflow on this machine, with its UI and REST API."""

from __future__ import annotations

import signal
import time
from typing import Annotated

import typer
from rich.markup import escape

from dagsmith.airflow.serve import LOOPBACK, DeploymentError, LocalDeployment
from dagsmith.cli.output import console, fail, progress
from dagsmith.cli.run import require_runtime
from dagsmith.config import Settings
from dagsmith.runtime import runtime_named
from dagsmith.runtime.base import RuntimeUnavailable

WATCH_SECONDS = 5
#: Who sees which pipeline's DAG in Airflow, by auth manager.
AUTH_LINES = {"simple": "simple auth manager: every login sees every DAG (for one person; --auth fab for several)",
              "fab": "FAB auth manager: each pipeline's DAG for its owner, everyone when shared, and admins"}


def _interrupt(*_) -> None:
    raise KeyboardInterrupt


def isolation_line(name: str, settings: Settings) -> str:
    """What contains the default runtime's services, loud when nothing does or it cannot run here."""
    runtime = runtime_named(name, settings)
    try:
        runtime.check()
    except RuntimeUnavailable as exc:
        return f"[bold red]{name}, which cannot run here: {escape(str(exc))}[/]"
    style = "green" if runtime.isolated else "bold red"
    return f"[{style}]{name}, {escape(runtime.isolation)}[/]"


def executor_line(deployment: LocalDeployment) -> str:
    """Who runs the tasks, and with Celery where the workers share their workspaces."""
    if deployment.broker is None:
        return "local: the scheduler runs every task on this machine"
    return (f"celery: {', '.join(deployment.worker_names.values())} on queues {deployment.settings.queue} and "
            f"default, broker {deployment.broker.socket}, workspaces {deployment.settings.workspaces_dir}")


def serve_command(
    port: Annotated[int, typer.Option(help="Port of the UI and REST API.", min=1, max=65535)] = 8080,
    host: Annotated[str, typer.Option(
        help="Address the UI and REST API listen on: this machine only by default; 0.0.0.0 for every interface "
             "(then use --auth fab and a TLS proxy in front).")] = LOOPBACK,
    runtime: Annotated[str, typer.Option(help="Default runtime of the pipelines' steps: local or docker.")] = "",
    user: Annotated[list[str] | None, typer.Option(
        "--user", help="Another login, NAME:ROLE with ROLE viewer, user, op or admin (repeatable).")] = None,
    auth: Annotated[str, typer.Option(
        help="Airflow's auth manager: simple (one person: every login sees every DAG) or fab (each pipeline's DAG "
             "seen by its owner, everyone when shared, and admins).")] = "simple",
    executor: Annotated[str, typer.Option(
        help="Who runs the tasks: local (the scheduler itself) or celery (Celery workers started here, with a Redis "
             "broker; pipeline steps on the DAGSMITH_QUEUE queue).")] = "local",
    workers: Annotated[int, typer.Option(help="Celery workers to start (with --executor celery).", min=1)] = 2,
) -> None:
    """Start Airflow (api-server, scheduler, dag-processor, triggerer; with Celery, a Redis broker and workers) with
    dagsmith's DAGs; Ctrl-C stops it."""
    settings = Settings.from_env()
    if runtime:
        require_runtime(runtime)
    users = dict(item.partition(":")[::2] for item in user or [])
    try:
        deployment = LocalDeployment(settings, port=port, host=host, runtime=runtime or None, users=users, auth=auth,
                                     executor=executor, workers=workers)
    except ValueError as exc:
        fail(str(exc), code=2)
    signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops the services as cleanly as Ctrl-C
    try:
        deployment.start(progress)
        logins = "".join(f"  login        {login.user} / {escape(login.password)} ({deployment.users[login.user]})\n"
                         for login in map(deployment.login, deployment.users))
        console.print(
            f"dagsmith is running on Airflow: [bold]{deployment.url}[/]\n"
            f"  listening    {deployment.listening}\n"
            f"{logins}  passwords    kept in {deployment.root / 'secrets.json'}\n"
            f"  auth         {AUTH_LINES[deployment.auth]}\n"
            f"  pages        {deployment.url}/dagsmith/ (catalog, upload, build, pipelines; also in Airflow's menu)\n"
            f"  meta-DAG     dagsmith_build_pipeline: trigger it with a dataset path and a goal\n"
            f"  REST API     {deployment.url}/api/v2 (token from POST {deployment.url}/auth/token)\n"
            f"  logs         {deployment.logs}\n"
            f"  steps run    {isolation_line(deployment.runtime, settings)}\n"
            f"  executor     {escape(executor_line(deployment))}\n"
            f"Ctrl-C stops every service.", highlight=False, soft_wrap=True)  # addresses stay whole, to copy
        while True:
            deployment.check_alive(progress)
            time.sleep(WATCH_SECONDS)
    except DeploymentError as exc:
        fail(str(exc), code=3)
    except KeyboardInterrupt:
        progress("stopping")
    finally:
        deployment.stop()
