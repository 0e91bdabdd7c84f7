"""What a worker of a multi-worker deployment (Airflow's CeleryExecutor) needs: a name each try records, and the
proof that it sees the shared workspace root.

A step on one worker reads the bundle its predecessor wrote on another, so every worker must see the same
workspaces. The deployment (``dagsmith serve``, the compose file's init) marks the shared root with
``SHARED_MARKER``; a worker whose root lacks the mark (the volume not mounted, another path configured) refuses to
start rather than fail a step later.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from dagsmith.errors import ServiceUnavailable

#: The worker's name as a try records it; set by ``dagsmith serve`` for each of its workers (they share one
#: machine's hostname), else the machine's hostname (a container's, under compose).
WORKER_VARIABLE = "DAGSMITH_WORKER_NAME"
#: The file that marks a workspace root as the deployment's shared one.
SHARED_MARKER = ".dagsmith-shared-workspaces"


class WorkspaceNotShared(ServiceUnavailable):
    """This worker's workspace root is not the deployment's shared one."""


def worker_name() -> str:
    """Who runs the current try: the deployment's name for this worker, or this machine's hostname."""
    return os.environ.get(WORKER_VARIABLE) or socket.gethostname()


def mark_shared(root: Path) -> None:
    """Mark ``root`` as the shared workspace root every worker must see."""
    root.mkdir(parents=True, exist_ok=True)
    (root / SHARED_MARKER).write_text("every worker of this deployment mounts this folder at this path\n",
                                      encoding="utf-8")


def check_shared(root: Path) -> None:
    """Raise with one line saying what to fix when ``root`` lacks the deployment's mark."""
    if not (root / SHARED_MARKER).is_file():
        raise WorkspaceNotShared(
            f"this worker's workspace root {root} is not the deployment's shared one (no {SHARED_MARKER} in it): "
            f"mount the shared workspace volume there or set DAGSMITH_WORKSPACE_ROOT to where it is mounted")
