"""What holds one step to its totals, however many processes it starts: its memory and its output.

Per-process limits do not add up to a budget: RLIMIT_AS bounds each interpreter a service starts, so four of
them held four times the step's memory, and the private ``/tmp`` and ``/dev/shm`` (tmpfs, in memory) came on
top. Where the host allows it the step runs in a memory cgroup of its own: the limit covers all its processes
and the tmpfs pages they write (the kernel charges a page to the cgroup of whoever first touches it), and the
kernel's OOM killer acts inside it. cgroup v1's memory controller is used where the worker may write it (root),
v2 where the worker may make cgroups in its own or its parent cgroup and that one enables the memory controller
for its children (root, or a delegated subtree). Elsewhere the sandbox falls back to caps that bound the worst
case instead: ``/tmp`` and ``/dev/shm`` share the budget, and the process count shrinks with the memory limit
(:func:`process_cap`), so the total stays within ``processes x memory``.

The output folder is on the host's disk. A watcher polls it while the step runs and kills the step when it
passes the total size, the file count or the per-file size of ``Limits``; the same check runs once more after
the step ends, so a fast writer that exits between two polls fails too. (The local runtime also sets
RLIMIT_FSIZE, which stops a single file's write at the kernel.)
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import secrets
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from dagsmith.runtime.base import Limits

MIB = 1024 * 1024
#: Seconds between two looks at a running step (its OOM kills and its output): a writer at disk speed passes its
#: output cap by at most what it writes in this time. A look that takes long (an output of thousands of files)
#: spaces the next ones out, so the watcher never takes more than a tenth of a core.
POLL_SECONDS = 0.05
POLL_SHARE = 0.1
#: Without a cgroup: a process per this many MB of the memory limit (never fewer than four, nor more than the
#: limit's own cap).
FALLBACK_MB_PER_PROCESS = 256
#: Without a cgroup, ``/tmp`` and ``/dev/shm`` share the memory budget in this proportion.
TMP_SHARE = 0.75
_CLEANUP_SECONDS = 10.0
CGROUP_PREFIX = "dagsmith-step-"
#: Age after which an empty step cgroup is a dead worker's leftover.
STALE_CGROUP_SECONDS = 60


def memory_exceeded(limits: Limits) -> str:
    return (f"the step used more than its {limits.memory_mb} MB of memory "
            f"(all its processes and its /tmp together)")


@contextlib.contextmanager
def memory_cgroup(limits: Limits) -> Iterator[Cgroup | None]:
    """A new cgroup holding a step to ``limits.memory_mb`` in all (None where the host allows none); whatever
    is still in it afterwards is killed, and it is removed."""
    cgroup = Cgroup.create(limits)
    try:
        yield cgroup
    finally:
        if cgroup:
            cgroup.remove()


def _sweep(folder: Path) -> None:
    """Remove the empty step cgroups a killed worker left (a minute old at least: a step joins its own at once)."""
    for stale in folder.glob(f"{CGROUP_PREFIX}*"):
        with contextlib.suppress(OSError):  # busy (a step still in it) or gone already
            if time.time() - stale.stat().st_mtime > STALE_CGROUP_SECONDS:
                stale.rmdir()


@dataclass(frozen=True)
class Cgroup:
    """One step's memory cgroup (v1 or v2), a child of the worker's."""

    path: Path
    version: int

    @classmethod
    def create(cls, limits: Limits) -> Cgroup | None:
        parent = _parent()
        if parent is None:
            return None
        folder, version = parent
        _sweep(folder)
        cgroup = cls(folder / f"{CGROUP_PREFIX}{secrets.token_hex(6)}", version)
        memory = str(limits.memory_mb * MIB)
        try:
            cgroup.path.mkdir()
        except OSError:
            return None
        try:
            if version == 1:  # the memory+swap limit may only be set once the memory limit is
                cgroup._write("memory.limit_in_bytes", memory)
                cgroup._write("memory.memsw.limit_in_bytes", memory, optional=True)
            else:
                cgroup._write("memory.max", memory)
                cgroup._write("memory.swap.max", "0", optional=True)
                cgroup._write("memory.oom.group", "1", optional=True)  # an OOM kill takes the whole step
        except OSError:
            cgroup.remove()
            return None
        return cgroup

    def join(self) -> None:
        """Move the calling process into the cgroup: called in the step's process before it execs."""
        fd = os.open(self.path / "cgroup.procs", os.O_WRONLY)
        try:
            os.write(fd, str(os.getpid()).encode())
        finally:
            os.close(fd)

    def oom_kills(self) -> int:
        """How many of the step's processes the kernel killed for going over the limit."""
        name = "memory.oom_control" if self.version == 1 else "memory.events"
        with contextlib.suppress(OSError, ValueError):
            for line in (self.path / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        return 0

    def peak_bytes(self) -> int:
        """The most memory the step held at once (0 where the kernel does not say)."""
        name = "memory.max_usage_in_bytes" if self.version == 1 else "memory.peak"
        with contextlib.suppress(OSError, ValueError):
            return int((self.path / name).read_text())
        return 0

    def kill(self) -> None:
        """SIGKILL every process in the cgroup (``cgroup.kill`` where the kernel has it, else one by one)."""
        with contextlib.suppress(OSError):
            if self.version == 2 and (self.path / "cgroup.kill").exists():
                self._write("cgroup.kill", "1")
                return
        for pid in self._pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def remove(self) -> None:
        """Kill what is left of the step and remove the cgroup, waiting for its processes to be gone."""
        deadline = time.monotonic() + _CLEANUP_SECONDS
        while True:
            self.kill()
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:  # busy: processes still exiting
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def _pids(self) -> list[int]:
        with contextlib.suppress(OSError):
            return [int(pid) for pid in (self.path / "cgroup.procs").read_text().split()]
        return []

    def _write(self, name: str, value: str, *, optional: bool = False) -> None:
        try:
            (self.path / name).write_text(value)
        except OSError:
            if not optional:
                raise


@functools.cache
def _parent() -> tuple[Path, int] | None:
    """The worker's own memory cgroup, where step cgroups can be made, with its version; None when there is none."""
    mounts = _cgroup_mounts()
    candidates = []
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(",") and "memory" in mounts:
            candidates.append((_inside(mounts["memory"], path), 1))
        elif controllers == "" and "" in mounts:
            candidates.append((_inside(mounts[""], path), 2))
    for folder, version in sorted(candidates, key=lambda candidate: candidate[1]):
        if folder is None:
            continue
        if version == 1 and os.access(folder, os.W_OK) and (folder / "memory.limit_in_bytes").exists():
            return folder, 1
        # v2 lets no cgroup but the root hold processes and enable controllers for children, so a worker's
        # steps usually go beside it, under a parent that enables the memory controller (a delegated subtree).
        for place in (folder, folder.parent) if version == 2 else ():
            if os.access(place, os.W_OK) and _enables_memory(place):
                return place, 2
    return None


def _cgroup_mounts() -> dict[str, tuple[str, str]]:
    """Mount point and mounted root of the v1 memory hierarchy (key ``memory``) and of cgroup v2 (key ``""``)."""
    mounts: dict[str, tuple[str, str]] = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields, _, tail = line.partition(" - ")
        root, point = fields.split()[3:5]
        kind, _, options = tail.split()[:3]
        if kind == "cgroup" and "memory" in options.split(","):
            mounts.setdefault("memory", (point, root))
        elif kind == "cgroup2":
            mounts.setdefault("", (point, root))
    return mounts


def _inside(mount: tuple[str, str], path: str) -> Path | None:
    point, root = mount
    if root != "/" and not (path == root or path.startswith(root + "/")):
        return None
    return Path(point) / path[len(root if root != "/" else ""):].lstrip("/")


def _enables_memory(folder: Path) -> bool:
    """Whether cgroups made under ``folder`` get a memory controller."""
    try:
        return "memory" in (folder / "cgroup.subtree_control").read_text().split()
    except OSError:
        return False


def set_limits(memory_bytes: int, cpu_seconds: int, file_bytes: int) -> None:
    """Hold the calling process (and what it starts) to an address space, CPU time (killed 5 s after the soft
    limit's signal) and file size: what a step's process takes before its service runs, cold or warm."""
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))


def process_cap(limits: Limits, bounded: bool) -> int:
    """The step's process limit: its own where a cgroup bounds the total, else also sized to the memory limit."""
    if bounded:
        return limits.max_processes
    return min(limits.max_processes, max(4, limits.memory_mb // FALLBACK_MB_PER_PROCESS))


def scratch_sizes(limits: Limits, bounded: bool) -> tuple[int, int]:
    """Bytes for ``/tmp`` and ``/dev/shm``: each the whole budget where a cgroup bounds their sum, else shared."""
    budget = limits.memory_mb * MIB
    if bounded:
        return budget, budget
    return int(budget * TMP_SHARE), budget - int(budget * TMP_SHARE)


def output_excess(folder: Path, limits: Limits) -> str:
    """What ``folder`` holds beyond the output caps, in words ("" when within them). Links and special files
    count as entries; the walk stops at the first cap passed."""
    total, count, pending = 0, 0, [folder]
    while pending:
        try:
            entries = list(os.scandir(pending.pop()))
        except OSError:  # removed while walked
            continue
        for entry in entries:
            count += 1
            if count > limits.output_files:
                return f"the step wrote more than {limits.output_files} files into its output"
            try:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(Path(entry.path))
                    continue
                size = entry.stat(follow_symlinks=False).st_size
            except OSError:
                continue
            if size > limits.file_mb * MIB:
                return f"the step wrote a file larger than {limits.file_mb} MB into its output ({entry.name})"
            total += size
            if total > limits.output_mb * MIB:
                return f"the step wrote more than {limits.output_mb} MB into its output"
    return ""


class StepGuard:
    """Watches one running step: its cgroup's OOM kills (when it has a cgroup) and its output folder.

    ``start(kill)`` begins the watch; over a limit it notes which (``exceeded``) and calls ``kill``. ``finish``
    stops the watch, checks once more, notes the cgroup's peak and returns what the step went over ("" for
    nothing).
    """

    def __init__(self, limits: Limits, output: Path, cgroup: Cgroup | None = None):
        self.limits, self.output, self.cgroup = limits, output, cgroup
        self.exceeded = ""
        self.peak_bytes = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, kill: Callable[[], None]) -> None:
        self._thread = threading.Thread(target=self._watch, args=(kill,), name="dagsmith-step-guard", daemon=True)
        self._thread.start()

    def finish(self) -> str:
        self._stop.set()
        if self._thread:
            self._thread.join()
        self.exceeded = self.exceeded or self._excess()
        if self.cgroup:
            self.peak_bytes = self.cgroup.peak_bytes()
        return self.exceeded

    def _watch(self, kill: Callable[[], None]) -> None:
        pause = POLL_SECONDS
        while not self._stop.wait(pause):
            began = time.monotonic()
            excess = self._excess()
            if excess:
                self.exceeded = excess
                kill()
                if self.cgroup:
                    self.cgroup.kill()
                return
            pause = max(POLL_SECONDS, (time.monotonic() - began) / POLL_SHARE)

    def _excess(self) -> str:
        if self.cgroup and self.cgroup.oom_kills():
            return memory_exceeded(self.limits)
        return output_excess(self.output, self.limits)
