"""The Airflow run of ``dagsmith run`` ends with its CLI.

The CLI starts the run (``dag.test()``) in a child process and holds the write end of a pipe whose read end the
child watches from a thread. The CLI writes ``STOP`` on Ctrl-C or SIGTERM; when the CLI dies, even by kill -9, the
kernel closes its end and the read returns nothing. Either way the child stops the run: it records it interrupted
(its running tries and the run failed with the reason, containers removed), leaves the embedded database (stopping
it when no one else alive uses it), removes its scratch root and its Airflow metadata, and exits; the services it
ran die with it (``runtime.local``: the kernel kills them when their worker exits). A pid or a polling loop would
notice later, or never for a reused pid; the pipe tells at once.

The child ignores SIGINT and SIGHUP, which a terminal sends to the whole foreground group: the CLI decides.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import threading
from pathlib import Path

from dagsmith.airflow.stopping import STARTED, STOPPING
from dagsmith.config import Settings
from dagsmith.execution.reaper import INTERRUPTED, interrupt
from dagsmith.scratch import SCRATCH_VARIABLE, remove_root
from dagsmith.store.embedded import leave

logger = logging.getLogger(__name__)
#: What the CLI writes to stop the run; end of file means the CLI is gone.
STOP = b"s"
#: The exit code of a run stopped this way (128 + SIGTERM, as a shell reports a terminated process).
STOPPED_EXIT = 143
#: At most this long to record the stop and leave the database; the run exits after it whatever happened.
STOP_SECONDS = 30.0
STOPPED_REASON = f"{INTERRUPTED}`dagsmith run` was stopped (Ctrl-C or SIGTERM) while this run was going"
ORPHANED_REASON = f"{INTERRUPTED}the `dagsmith run` that started this run was killed; the run stopped with it"


def end_with_parent(fd: int) -> None:
    """In the run's process: stop the run when the CLI says so or dies (see the module's docstring)."""
    for number in (signal.SIGINT, signal.SIGHUP):
        signal.signal(number, signal.SIG_IGN)
    threading.Thread(target=_watch, args=(fd,), name="dagsmith-cli-watch", daemon=True).start()


def _watch(fd: int) -> None:
    reason = STOPPED_REASON if os.read(fd, 1) == STOP else ORPHANED_REASON
    STOPPING.set()  # before recording it: no task starts while the database is slow to answer
    threading.Timer(STOP_SECONDS, _exit).start()  # a database that does not answer must not keep the run alive
    try:
        _record(reason)
    except Exception:  # the database is gone too: the reaper closes the run from its heartbeats
        logger.exception("the stopped run could not be recorded as interrupted")
    _exit()


def _record(reason: str) -> None:
    for execution_id in STARTED:
        interrupt(execution_id, reason, Settings.from_env())
    leave()


def _exit() -> None:
    """Remove what the run keeps on disk and end the process at once (no exit hooks: Airflow is mid-task)."""
    if root := os.environ.get(SCRATCH_VARIABLE):
        remove_root(Path(root))
    if home := os.environ.get("AIRFLOW_HOME"):
        shutil.rmtree(home, ignore_errors=True)
    os._exit(STOPPED_EXIT)
