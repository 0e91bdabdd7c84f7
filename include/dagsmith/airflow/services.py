"""The processes of a deployment on one machine: each service in a process group of its own with its log, stopped
with its whole group, and the Celery executor's Redis broker, which is started again when it exits.

The broker is Debian's ``redis-server`` on a unix socket only its owner can open, its queue in an append-only file
written through on every change: a broker that exits, even killed, gives back every task it had taken, so starting
it again loses no run. One that keeps exiting is a fault to report, not to hide.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from dagsmith.errors import ServiceUnavailable

#: A broker that exits is restarted, unless it has started more than this many times within the window (seconds).
BROKER_RESTARTS, BROKER_RESTART_WINDOW = 3, 600
BROKER_START_TIMEOUT = 30.0


class DeploymentError(ServiceUnavailable, RuntimeError):
    """The deployment could not start (with the failing service's log tail)."""


def spawn(logs: Path, service: str, command: list[str], env: dict[str, str]) -> subprocess.Popen:
    """Start a service in a process group of its own, its output appended to its log."""
    with (logs / f"{service}.log").open("a", encoding="utf-8") as log:  # the service keeps its own copy
        return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)


def log_tail(logs: Path, service: str, characters: int = 3000) -> str:
    return (logs / f"{service}.log").read_text(errors="replace")[-characters:]


def signal_group(process: subprocess.Popen, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)


def stop(process: subprocess.Popen, deadline: float) -> None:
    """Wait for a signalled process until ``deadline``, then kill its group."""
    try:
        process.wait(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        signal_group(process, signal.SIGKILL)
        process.wait()


class Broker:
    """The deployment's Redis: started before the workers, watched while they run, stopped after them."""

    def __init__(self, root: Path, logs: Path):
        self.root, self.logs = root, logs
        self.process: subprocess.Popen | None = None
        self._starts: list[float] = []

    @property
    def socket(self) -> Path:
        return self.root / "redis.sock"

    @property
    def url(self) -> str:
        return f"redis+socket://{self.socket}"

    def start(self) -> None:
        if importlib.util.find_spec("airflow.providers.celery") is None:
            raise DeploymentError("--executor celery needs Airflow's Celery provider: pip install -r requirements.txt")
        if shutil.which("redis-server") is None:
            raise DeploymentError("--executor celery needs redis-server: run scripts/setup-celery.sh (Debian/Ubuntu: "
                                  "apt-get install redis-server)")
        folder = self.root / "redis"
        folder.mkdir(parents=True, exist_ok=True)
        self.socket.unlink(missing_ok=True)  # a killed broker leaves its socket behind
        self.process = spawn(self.logs, "redis", [
            "redis-server", "--port", "0", "--unixsocket", str(self.socket), "--unixsocketperm", "700",
            "--dir", str(folder), "--appendonly", "yes", "--appendfsync", "always", "--save", "",
            "--daemonize", "no"], dict(os.environ))
        deadline = time.monotonic() + BROKER_START_TIMEOUT
        while not self.socket.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise DeploymentError(f"redis-server did not start:\n{log_tail(self.logs, 'redis', 2000)}")
            time.sleep(0.1)
        self._starts.append(time.monotonic())

    def restart_if_exited(self, progress: Callable[[str], None]) -> None:
        """Start the broker again when it has exited, unless it keeps exiting."""
        if self.process is None or self.process.poll() is None:
            return
        recent = [started for started in self._starts if started > time.monotonic() - BROKER_RESTART_WINDOW]
        if len(recent) > BROKER_RESTARTS:
            raise DeploymentError(f"the Redis broker exited {len(recent)} times within {BROKER_RESTART_WINDOW // 60} "
                                  f"minutes (last code {self.process.returncode}):\n{log_tail(self.logs, 'redis')}")
        progress(f"the Redis broker exited with code {self.process.returncode}: restarting it")
        self.start()

    def stop(self, timeout: float) -> None:
        if self.process is not None:
            signal_group(self.process, signal.SIGTERM)
            stop(self.process, time.monotonic() + timeout)
            self.process = None
