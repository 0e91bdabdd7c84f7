"""Private scratch folders: where a run stages a service's code and parameters, or a decompressed or flattened copy
of a dataset, for one step.

What they hold is the user's (their data, a service's parameters), so each folder is private (0700) and removed when
its step ends. A run the local CLI starts gets a scratch root of its own (``DAGSMITH_HOME/scratch/<run>``, named
to the Airflow run in ``DAGSMITH_SCRATCH``) holding every folder of its steps: the run removes it when it ends or
is stopped, and when the run was killed outright (kill -9 of every process) the next run's start does
(``sweep``), told by a lock the run held for its lifetime. A folder no run holds (a deployment's worker's step, a
scoring of new rows) gets a locked root of its own the same way, in this machine's temporary folder: a process
killed meanwhile leaves it to the next such folder made on the machine to remove.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

SCRATCH_VARIABLE = "DAGSMITH_SCRATCH"


@contextmanager
def scratch_folder(prefix: str, root: Path | None = None) -> Iterator[Path]:
    """A new private folder, under ``root`` (a folder a step's pod sees too) or the run's scratch root when there is
    one, else under a root of its own (``_own_root``), removed when the block ends."""
    where = root or os.environ.get(SCRATCH_VARIABLE)
    with nullcontext(Path(where)) if where else _own_root() as parent:
        if parent:
            parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=prefix, dir=parent) as folder:  # mkdtemp makes it 0700
            yield Path(folder)


@contextmanager
def _own_root() -> Iterator[Path | None]:
    """A locked scratch root for one folder that no run holds (a deployment's worker, a scoring of new rows), after
    sweeping the roots of processes killed on this machine. The roots live in this user's folder of the machine's
    temporary folder: a lock tells a live holder only on a local file system, and a shared home may not be one.
    Where that folder is not this user's own, None: the folder goes in the temporary folder itself."""
    parent = Path(tempfile.gettempdir()) / f"dagsmith-scratch-{os.getuid()}"
    if parent.exists() and parent.stat().st_uid != os.getuid():
        yield None
        return
    sweep(parent)
    root = new_root(parent)
    try:
        yield root.folder
    finally:
        remove_root(root.folder)
        os.close(root.lock_fd)


@dataclass(frozen=True)
class ScratchRoot:
    """A run's scratch root, and the open lock file that says the run is alive (pass it on to the run's process)."""

    folder: Path
    lock_fd: int


def run_roots(home: Path) -> Path:
    """Where the local CLI's runs keep their scratch roots."""
    return home / "scratch"


def new_root(parent: Path) -> ScratchRoot:
    """A scratch root under ``parent``, locked (``flock``) by the caller until it passes the lock on."""
    parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder = parent / f"{datetime.now(UTC):%Y%m%dT%H%M%S%f}-{os.getpid()}"
    fd = os.open(folder.with_suffix(".lock"), os.O_WRONLY | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    folder.mkdir(mode=0o700)
    return ScratchRoot(folder, fd)


def remove_root(folder: Path) -> None:
    """Remove a run's scratch root and its lock file."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.with_suffix(".lock").unlink(missing_ok=True)


def sweep(parent: Path) -> list[Path]:
    """Remove the scratch roots under ``parent`` that no process holds any more (killed outright); returns them."""
    removed = []
    for lock in sorted(parent.glob("*.lock")):
        try:
            fd = os.open(lock, os.O_WRONLY)
        except FileNotFoundError:  # removed by its own run meanwhile
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # its run is alive
        else:
            remove_root(lock.with_suffix(""))
            removed.append(lock.with_suffix(""))
        finally:
            os.close(fd)
    return removed
