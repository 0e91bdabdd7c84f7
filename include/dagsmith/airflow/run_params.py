"""What a run of a dagsmith DAG is given: where its steps run, which dataset it reads (held to the data roots) and whose
run it is. Shared by the meta-DAG, each pipeline's DAG and its scoring DAG."""

from __future__ import annotations

from airflow.sdk import Param
from airflow.sdk.exceptions import AirflowFailException
from airflow.utils.types import DagRunType

from dagsmith.airflow.ownership import api_login
from dagsmith.config import Settings
from dagsmith.data.roots import DatasetRefused, confine
from dagsmith.runtime import RUNTIMES


def runtime_param() -> Param:
    """The ``runtime`` run parameter of the meta-DAG and of every pipeline DAG (default: ``DAGSMITH_RUNTIME``)."""
    return Param(Settings.from_env().runtime, enum=list(RUNTIMES),
                 description="Where each step runs: local subprocesses, docker containers or kubernetes pods.")


def self_healing_param() -> Param:
    """The ``self_healing`` run parameter of every pipeline DAG: off, a failed step is retried as plain Airflow
    retries are (``healing.policy.PLAIN_RETRIES``)."""
    return Param(True, type="boolean",
                 description="Let self-healing swap a failing step's service for the next-ranked candidate; off, "
                             "a failed step runs the same service again, three more times at most.")


def run_dataset(given: str, settings: Settings) -> str:
    """The ``dataset`` a run names, held to the data roots unless the local CLI runs it (``Settings.local_cli``,
    from the worker's environment, never from the run's params). A refused path fails the task at once."""
    if settings.local_cli:
        return given
    try:
        return str(confine(given, settings))
    except DatasetRefused as exc:
        raise AirflowFailException(str(exc)) from None


def run_user(run_type: str, triggering_user: str | None, asked: str) -> str:
    """Whose run this is, which their history learns from: the login that triggered it from the UI or the REST API,
    whatever its ``user`` says; else (the meta-DAG's ``execute``, which passes the pipeline's owner, a schedule, an
    asset update, an in-process run) the run's ``user``."""
    login = api_login(triggering_user)
    return login if run_type == DagRunType.MANUAL and login else asked
