"""The child process of a local run (``airflow.local``): it gets Airflow ready, then runs one pipeline's DAG with
``dag.test()``.

It starts before it knows its pipeline, so the CLI can plan meanwhile: it imports Airflow and the tasks' modules,
builds Airflow's in-process execution API for its tasks' version of it (``execution_api``; the first task of a
``dag.test()`` run would otherwise wait seconds for it) and starts the local runtime's zygote (``runtime.zygote``),
then reads its order, one JSON line on standard input (end of input: no run is wanted, and it cleans up and exits;
a CLI whose planning ended in a question stops it as it stops a run). Parsing for the one DAG, as a worker does,
builds just its pipeline (``pipeline_shards``). The run ends with its CLI (``watch``). Its outcome goes to the
result file (argv 1): the run's state and the summary its ``finish`` task left in XCom.
"""

from __future__ import annotations

import json
import logging
import os
import runpy
import shutil
import sys
from pathlib import Path

from pydantic import BaseModel

from dagsmith.airflow.watch import end_with_parent
from dagsmith.scratch import SCRATCH_VARIABLE, remove_root
from dagsmith.store.embedded import leave
from dagsmith_kit.files import write_whole


class RunOrder(BaseModel):
    """Which DAG the child runs, from which file, with which run conf."""

    dag_file: str
    dag_id: str
    conf: dict


def _get_ready() -> None:
    """Import what the run's tasks import, build the in-process execution API that ``dag.test()`` reuses, and start
    the local runtime's zygote (``runtime.zygote``), whose imports then overlap the planning too."""
    import httpx
    from airflow.sdk.execution_time.supervisor import in_process_api_server

    import dagsmith.airflow.pipeline_dag  # the DAG file's and the tasks' imports
    import dagsmith.execution.run  # noqa: F401
    from dagsmith.airflow.execution_api import serve_only_the_sdk_version

    from dagsmith.config import Settings
    from dagsmith.runtime import prestart

    prestart(Settings.from_env())
    serve_only_the_sdk_version()
    api = in_process_api_server()  # cached for the process: dag.test() reuses it
    with httpx.Client(transport=api.transport, base_url="http://in-process.invalid./") as client:
        client.get("/health")  # the app's first request starts it: seconds that would fall on the first task


def _run(order: RunOrder, result: Path) -> None:
    from airflow.models.xcom import XComModel
    from airflow.sdk.definitions._internal.dag_parsing_context import _airflow_parsing_context_manager
    from airflow.utils.session import create_session

    from dagsmith.models.airflow import ONE_AT_A_TIME_VARIABLE, SUMMARY_XCOM

    os.environ[ONE_AT_A_TIME_VARIABLE] = "1"  # dag.test() runs one task at a time: one task runs a search's models
    with _airflow_parsing_context_manager(dag_id=order.dag_id):
        dag = runpy.run_path(order.dag_file)[order.dag_id]
        run = dag.test(run_conf=order.conf)
    with create_session() as session:
        summary = session.scalar(XComModel.get_many(run_id=run.run_id, dag_ids=dag.dag_id, task_ids="finish",
                                                    key=SUMMARY_XCOM, limit=1))
        summary = XComModel.deserialize_value(summary) if summary is not None else None
    write_whole(result, json.dumps({"state": str(run.state), "run_id": run.run_id, "summary": summary}))


class DagTestRun:
    """The component that stops, as Airflow's listeners are told (a scheduler tells them it is the job that stops)."""


def _stop_listeners() -> None:
    """Tell Airflow's listeners the run is over, as its scheduler and workers do when they stop: OpenLineage's then
    sends the events it holds and stops its process pool, whose workers this process's exit would otherwise leave
    behind, each waiting for work for ever."""
    from airflow.listeners.listener import get_listener_manager

    try:
        get_listener_manager().hook.before_stopping(component=DagTestRun())
    except Exception:  # a listener's failure is its own: the run is over and is recorded
        logging.getLogger(__name__).exception("a listener failed as the run ended")


def main(result: str, stop_fd: str) -> None:
    end_with_parent(int(stop_fd))
    try:
        _get_ready()
        if order := sys.stdin.readline():
            try:
                _run(RunOrder.model_validate_json(order), Path(result))
            finally:
                _stop_listeners()
    finally:
        shutil.rmtree(os.environ["AIRFLOW_HOME"], ignore_errors=True)  # the run's own metadata: done with it
        remove_root(Path(os.environ[SCRATCH_VARIABLE]))
    # Everything the run leaves is written by now (its result file, its records; pooled connections are idle). The
    # interpreter's own teardown of Airflow's heap took over two seconds after every run, while its CLI waited.
    leave()
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main(*sys.argv[1:])
