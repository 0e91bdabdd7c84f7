"""Whether the Airflow run in this process is being stopped by the `dagsmith run` that started it, and which
execution that run recorded (its ``start`` task creates it, and the stop records it interrupted).

``airflow.watch`` sets it the moment the CLI says stop or dies, before it records the run interrupted, which can take
a while on a busy database. Every task checks it before it starts, so no step, selection or ``finish`` begins
meanwhile: a run stopped near its end is recorded as stopped, not completed by the tasks racing the recording.
"""

from __future__ import annotations

import threading

STOPPING = threading.Event()
#: The executions the Airflow run in this process recorded (a ``dag.test()`` run has one per run).
STARTED: list[int] = []


def refuse_if_stopping() -> None:
    """Fail the task about to start (no retry) when the run is being stopped."""
    if STOPPING.is_set():
        # Imported only to raise: the CLI imports this module (through ``airflow.watch``), and importing Airflow's
        # SDK there would set up Airflow's logging in the CLI, whose output must stay the CLI's own.
        from airflow.sdk.exceptions import AirflowFailException

        raise AirflowFailException("the run is being stopped: the `dagsmith run` that started it was stopped or died")
