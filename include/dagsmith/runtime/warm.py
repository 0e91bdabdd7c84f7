"""The worker's side of warm starts (``runtime.zygote``): one zygote process for a process that runs many steps, or
forks processes that do (an Airflow scheduler or Celery worker, ``airflow.forks``), started ahead of them
(``LocalRuntime.prestart``), started again when it died, given up on when it cannot start.

A warm step runs in the same bubblewrap sandbox as a cold one: ``local`` starts the sandbox with ``PLACEHOLDER``
in place of the service and asks the zygote to fork the service into it. Whatever goes wrong with the warm start
itself (no zygote, a refused join) is reported as such, and the step starts cold instead.
"""

from __future__ import annotations

import io
import json
import logging
import os
import select
import selectors
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import IO

from dagsmith.runtime.zygote import CONNECT, FORKED, MESSAGE_BYTES, READY, Request

logger = logging.getLogger(__name__)
#: What the sandbox runs until the service joins it: a line on its stdout, which says bwrap has built the sandbox
#: whole, then nothing, for ever (the worker ends it).
PLACEHOLDER = ["sh", "-c", "echo; exec sleep infinity"]
#: ``DAGSMITH_COLD_STEPS=1`` starts every step in a fresh interpreter (``Settings.warm_steps``).
COLD_VARIABLE = "DAGSMITH_COLD_STEPS"


class ZygoteUnavailable(RuntimeError):
    """The zygote could not take a request; the step starts cold."""


class Zygote:
    """A running zygote, and this process's connection to it.

    The process that started it (the starter) holds the hub it was started with. A process forked from the starter
    (an Airflow worker's task) inherits the hub and whether the zygote was ready then, and opens a connection of its
    own on its first request, so that each answer reaches the process that asked; only the starter replaces a zygote
    that died. Requests on one connection are answered in turn (a lock keeps threads' requests and answers paired).
    The zygote ends when every process holding the hub has closed it or ended."""

    def __init__(self, environment: dict[str, str]):
        hub, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._hub = hub
        self._starter = os.getpid()
        self._lock = threading.Lock()
        self._ready = False
        self._connection: socket.socket | None = None
        self.home = environment["HOME"]
        with theirs:
            # A session of its own: a signal to the worker's group (Ctrl-C, a kill of the group) leaves it to end
            # cleanly, its home removed, when its hub closes. Its stderr is the worker's: why it ended shows there.
            self.process = subprocess.Popen(
                [sys.executable, "-m", "dagsmith.runtime.zygote", str(theirs.fileno())], env=environment,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, pass_fds=(theirs.fileno(),), cwd=self.home,
                start_new_session=True)

    @property
    def ours(self) -> bool:
        """Whether this process started it (and may wait for it, and replace it)."""
        return os.getpid() == self._starter

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def ready(self, timeout: float = 0.0) -> bool:
        """Whether it has done its imports and takes requests, the starter waiting up to ``timeout`` seconds to hear
        it. A step does not wait: while the zygote imports, steps start cold. A forked process knows only what its
        starter knew when it forked: the hub's one message is the starter's to read."""
        with self._lock:
            if not self._ready and self.ours and select.select([self._hub], [], [], timeout)[0]:
                self._ready = self._hub.recv(MESSAGE_BYTES) == READY  # b"" when it ended instead
            return self._ready

    def fork(self, request: Request, out: int, err: int, status: int) -> None:
        """Fork the service of ``request`` with those descriptors as its stdout, stderr and status pipe."""
        with self._lock:
            try:
                if self._connection is None:
                    self._connection = self._connect()
                socket.send_fds(self._connection, [request.encode()], [out, err, status])
                answer = self._connection.recv(MESSAGE_BYTES)
            except OSError as exc:
                answer = f"{exc}".encode()
            if answer != FORKED:
                self._ready = False  # a forked process's later steps start cold at once; the starter replaces it
                raise ZygoteUnavailable(f"the zygote did not fork the step ({answer.decode() or 'it ended'})")

    def _connect(self) -> socket.socket:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with theirs:
            socket.send_fds(self._hub, [CONNECT], [theirs.fileno()])
        return ours

    def _forked(self) -> None:
        """In a process just forked: a connection of its own, and a lock no thread of the parent can hold."""
        self._lock = threading.Lock()
        if self._connection is not None:
            self._connection.close()
            self._connection = None


_lock = threading.Lock()
_zygote: Zygote | None = None
#: Zygotes a process may start: one, and one more should the first die; after that its steps start cold.
_STARTS = 2
_started = 0


def zygote(environment: Callable[[], dict[str, str]], *, start: bool = False) -> Zygote | None:
    """This process's zygote: with ``start``, started with ``environment()`` (the services' clean one, its own home)
    when there is none; one that died is started again by the process that started it. None when no process started
    one (a process that runs one step would pay the zygote's imports, all of them, for that step alone) or it cannot
    be started."""
    global _zygote, _started
    with _lock:
        if _zygote is not None and (not _zygote.ours or _zygote.alive):
            return _zygote
        if _zygote is None and not start:
            return None
        if _zygote is not None:
            logger.warning("the zygote of warm step starts ended (exit code %s)", _zygote.process.poll())
            shutil.rmtree(_zygote.home, ignore_errors=True)  # killed, it could not remove its home itself
            _zygote = None
        if _started >= _STARTS:
            return None
        _started += 1
        try:
            _zygote = Zygote(environment())
        except OSError as exc:
            logger.warning("steps start cold: the zygote of warm starts could not start (%s)", exc)
        return _zygote


def _forked() -> None:
    global _lock
    _lock = threading.Lock()
    if _zygote is not None:
        _zygote._forked()


os.register_at_fork(after_in_child=_forked)


def built_sandbox(info: io.BufferedReader, placeholder: IO[bytes]) -> int:
    """The host pid of the sandbox's init, once the sandbox is built: bwrap writes the pid to ``--info-fd`` before
    it mounts anything, and a process joining its namespaces then would see the host's files; the placeholder's line
    comes once the mounts are made and the privileges and filter in place. LookupError when bwrap ended before
    either: it could not build the sandbox."""
    pid = _sandbox_pid(info)
    if placeholder.readline() != b"\n":
        raise LookupError("bubblewrap did not start the sandbox")
    return pid


def _sandbox_pid(info: io.BufferedReader) -> int:
    """The pid bwrap writes to ``--info-fd`` (LookupError when it ended without writing it)."""
    text = b""
    while chunk := info.read1(4096):
        text += chunk
        try:
            return int(json.loads(text)["child-pid"])
        except ValueError:
            continue
    raise LookupError("bubblewrap did not start the sandbox")


def collect(out: int, err: int, status: int, timeout: float,
            kill: Callable[[], None]) -> tuple[bytes, bytes, str, bool]:
    """Read a warm service's stdout and stderr until it ends (its exit status arrives) or ``timeout`` seconds pass;
    then ``kill`` ends whatever it left running, and the rest of its output is read. Returns stdout, stderr, the
    status ("" when it was killed before one came) and whether the timeout struck."""
    chunks: dict[int, list[bytes]] = {out: [], err: [], status: []}
    deadline, ended, timed_out = time.monotonic() + timeout, False, False
    with selectors.DefaultSelector() as selector:
        for fd in chunks:
            selector.register(fd, selectors.EVENT_READ)
        open_fds = set(chunks)
        while open_fds:
            if not ended and (status not in open_fds or time.monotonic() >= deadline):
                ended, timed_out = True, status in open_fds
                kill()  # nothing it started outlives it, and its pipes close
            for key, _ in selector.select(None if ended else max(deadline - time.monotonic(), 0)):
                if data := os.read(key.fd, 65536):
                    chunks[key.fd].append(data)
                else:
                    selector.unregister(key.fd)
                    open_fds.discard(key.fd)
    for fd in chunks:
        os.close(fd)
    return b"".join(chunks[out]), b"".join(chunks[err]), b"".join(chunks[status]).decode(), timed_out
