"""The container runtime: each invocation in its own container, through any Docker-API endpoint.

Catalog services are untrusted code, so the container gives them no network, a read-only root filesystem,
a non-root uid, memory/CPU/process budgets and none of the caller's environment. The endpoint is Docker or
podman's Docker-compatible service (``scripts/setup-container-runtime.sh`` prepares it and the runtime image).
Every service runs in that one image: nothing is built or installed for a service (see ``runtime.packages``).

:class:`ContainerSpec` is the one source of truth for image, mounts, limits, command and environment: both
:meth:`DockerRuntime.run` and :meth:`DockerRuntime.docker_operator_kwargs` (Airflow's ``DockerOperator``)
are derived from it.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import docker
import requests
from docker.errors import APIError, DockerException, ImageNotFound, NotFound
from docker.models.containers import Container
from docker.types import Mount

from dagsmith.runtime.base import (INPUT_DIR, OUTPUT_DIR, PARAMS_FILE, SERVICE_DIR, HostPaths, Invocation,
                                   InvocationResult, Limits, RuntimeUnavailable, contract_command, prepare_data_dirs,
                                   stage)
from dagsmith.runtime.packages import not_provided, unavailable

RUNTIME_IMAGE = "dagsmith-runtime:py311"
DEFAULT_SOCKET = "/run/dagsmith/podman.sock"
SETUP_HINT = ("run scripts/setup-container-runtime.sh (as root); it starts podman's Docker API on "
              f"unix://{DEFAULT_SOCKET} (or $DAGSMITH_PODMAN_SOCKET) and builds {RUNTIME_IMAGE}")
SERVICE_UID = 10001
SERVICE_USER = f"{SERVICE_UID}:{SERVICE_UID}"
COMMAND = contract_command("python")
ENVIRONMENT = {
    "PATH": "/opt/venv/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1",
    "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    "MPLBACKEND": "Agg", "MPLCONFIGDIR": "/tmp/matplotlib",
}
OUTPUT_TAIL = 64 * 1024
CONTAINER_ISOLATION = "container (no network, read-only root and input, non-root)"
OOM_EXIT_CODE = 137  # 128 + SIGKILL: what the kernel's OOM killer leaves behind
AT_LIMIT = 0.9  # a container this close to its memory limit when its time runs out was thrashing, not working
NOT_RUN_EXIT_CODE = 125  # Docker's code for "the container could not be run"


def memory_limit(limits: Limits) -> str:
    return f"{limits.memory_mb}m"


def sandbox_kwargs(limits: Limits) -> dict[str, Any]:
    """The host-config limits Airflow's ``DockerOperator`` has no arguments for (an exported pipeline's operator adds
    them itself): no swap, a hard CPU quota, a process cap, a read-only root, no capabilities."""
    return {"memswap_limit": memory_limit(limits), "nano_cpus": int(limits.cpus * 1e9),
            "pids_limit": limits.max_processes, "read_only": True, "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"]}


@dataclass(frozen=True)
class ContainerSpec:
    """Everything that defines how an invocation runs in a container."""

    image: str
    mounts: tuple[Mount, ...]
    limits: Limits
    labels: dict[str, str]

    @classmethod
    def of(cls, invocation: Invocation, host: HostPaths, image: str) -> ContainerSpec:
        limits = invocation.limits
        mounts = (
            Mount(SERVICE_DIR, str(host.service_dir), type="bind", read_only=True),
            Mount(PARAMS_FILE, str(host.params_file), type="bind", read_only=True),
            Mount(INPUT_DIR, str(invocation.input_dir.resolve()), type="bind", read_only=True),
            Mount(OUTPUT_DIR, str(invocation.output_dir.resolve()), type="bind", read_only=False),
            Mount("/tmp", None, type="tmpfs", tmpfs_size=limits.memory_mb * 1024 * 1024, tmpfs_mode=0o1777),
        )
        return cls(image=image, mounts=mounts, limits=limits,
                   labels={**invocation.labels, "dagsmith.service": invocation.service,
                           "dagsmith.code_hash": invocation.code_hash})

    @property
    def mem_limit(self) -> str:
        return memory_limit(self.limits)

    def environment(self) -> dict[str, str]:
        """The container's whole environment: what Python needs and the service's name, nothing of the host's."""
        return {**ENVIRONMENT, "DAGSMITH_SERVICE": self.labels["dagsmith.service"]}

    def create_kwargs(self) -> dict[str, Any]:
        """Arguments of docker-py ``containers.create``."""
        return {
            "image": self.image, "command": COMMAND, "user": SERVICE_USER, "environment": self.environment(),
            "mounts": list(self.mounts), "network_mode": "none", "mem_limit": self.mem_limit,
            "working_dir": "/tmp", "labels": self.labels, **sandbox_kwargs(self.limits),
        }

    def operator_kwargs(self, docker_url: str, timeout_seconds: int) -> dict[str, Any]:
        """Arguments of Airflow's ``DockerOperator`` (providers-docker 4.6.1) for the same container.

        DockerOperator cannot express ``pids_limit``, ``read_only``, ``cap_drop``, ``security_opt`` or
        ``memswap_limit``, and turns ``cpus`` into relative ``cpu_shares`` rather than a hard quota.
        """
        return {
            "image": self.image, "command": COMMAND, "user": SERVICE_USER, "environment": self.environment(),
            "mounts": list(self.mounts), "network_mode": "none", "mem_limit": self.mem_limit,
            "cpus": self.limits.cpus, "working_dir": "/tmp", "labels": self.labels,
            "docker_url": docker_url, "auto_remove": "force", "mount_tmp_dir": False, "force_pull": False,
            "execution_timeout": timedelta(seconds=timeout_seconds),
        }


class PinsUnavailable(RuntimeError):
    """The service pins packages the runtime image does not provide (a catalog row stored before uploads were
    held to the runtime's packages); the message names them."""


class DockerRuntime:
    """Runs invocations as containers on a Docker-API endpoint (``base_url``, else DOCKER_HOST, else podman)."""

    name = "docker"
    isolation = CONTAINER_ISOLATION
    isolated = True

    def __init__(self, base_url: str | None = None, image: str = RUNTIME_IMAGE):
        socket = os.environ.get("DAGSMITH_PODMAN_SOCKET", DEFAULT_SOCKET)
        self.base_url = base_url or os.environ.get("DOCKER_HOST") or f"unix://{socket}"
        self.image = image
        self._client: docker.DockerClient | None = None

    @property
    def client(self) -> docker.DockerClient:
        """A connected client; connecting lazily lets code construct the runtime where no engine runs."""
        if self._client is None:
            try:
                client = docker.DockerClient(base_url=self.base_url, timeout=600)
                client.ping()
            except (DockerException, requests.RequestException) as error:
                raise RuntimeUnavailable(f"no container engine answers on {self.base_url} ({error}); "
                                         f"{SETUP_HINT}") from error
            self._client = client
        return self._client

    def check(self) -> None:
        """Raise ``RuntimeUnavailable``, saying how to fix it, unless the engine answers and has the runtime image."""
        try:
            self.client.images.get(self.image)
        except ImageNotFound as error:
            raise RuntimeUnavailable(f"the runtime image {self.image} is missing; {SETUP_HINT}") from error

    def run(self, invocation: Invocation) -> InvocationResult:
        try:
            image = self.image_for(invocation)
        except PinsUnavailable as error:
            return InvocationResult(exit_code=NOT_RUN_EXIT_CODE, stdout="", stderr=f"error: {error}", seconds=0.0)
        prepare_data_dirs(invocation, SERVICE_UID)
        with tempfile.TemporaryDirectory(prefix=f"dagsmith-{invocation.service}-") as scratch:
            spec = ContainerSpec.of(invocation, stage(invocation, Path(scratch)), image)
            name = f"dagsmith-{re.sub(r'[^a-zA-Z0-9_.-]', '-', invocation.service)}-{uuid.uuid4().hex[:8]}"
            container = self.client.containers.create(name=name, **spec.create_kwargs())
            try:
                return _execute(container, invocation.limits.timeout_seconds)
            finally:
                container.remove(force=True)

    def remove_labelled(self, label: str, values: list[str]) -> int:
        """Force-remove the containers whose ``label`` is one of ``values`` (running or not); returns how many."""
        wanted = set(values)
        found = [c for c in self.client.containers.list(all=True, filters={"label": label})
                 if c.labels.get(label) in wanted]
        for container in found:
            with contextlib.suppress(NotFound):  # removed meanwhile by its own worker's cleanup
                container.remove(force=True)
        return len(found)

    def docker_operator_kwargs(self, invocation: Invocation, host_paths: HostPaths) -> dict[str, Any]:
        """``DockerOperator`` arguments for ``invocation``, with code and params staged (:func:`stage`) at
        ``host_paths``; raises ``PinsUnavailable`` now rather than start a task bound to fail."""
        image = self.image_for(invocation)
        prepare_data_dirs(invocation, SERVICE_UID)
        spec = ContainerSpec.of(invocation, host_paths, image)
        return spec.operator_kwargs(self.base_url, invocation.limits.timeout_seconds)

    def image_for(self, invocation: Invocation) -> str:
        """The runtime image, when it provides every pin of the service and the engine has it."""
        missing = unavailable(invocation.requirements)
        if missing:
            raise PinsUnavailable(not_provided(missing))
        self.check()
        return self.image


def _wait(container: Container, timeout_seconds: int) -> int | None:
    """The exit code, or None on timeout. Polls the state with backoff instead of the ``wait`` endpoint, which
    in podman 4.3 keeps a CPU core busy for the whole run (containers/podman#18150)."""
    deadline = time.monotonic() + timeout_seconds
    interval = 0.02
    while time.monotonic() < deadline:
        container.reload()
        if container.status in ("exited", "dead"):
            return int(container.attrs["State"]["ExitCode"])
        time.sleep(min(interval, max(0.0, deadline - time.monotonic())))
        interval = min(interval * 2, 0.5)
    return None


def _memory_at_limit(container: Container) -> str:
    """Why a timed-out container ran out of time, when it was at its memory limit: without swap the kernel
    can page a process's code in and out for minutes before its OOM killer acts, so a service that needs
    more memory than it has may reach its timeout first, and the person reading the log should know."""
    try:
        memory = container.stats(stream=False).get("memory_stats") or {}
    except (APIError, requests.RequestException):
        return ""
    usage, limit = memory.get("usage") or 0, memory.get("limit") or 0
    if not limit or usage < AT_LIMIT * limit:
        return ""
    return f" while at its memory limit ({usage >> 20} of {limit >> 20} MiB): out of memory"


def _execute(container: Container, timeout_seconds: int) -> InvocationResult:
    """Start, wait with the timeout (kill on expiry), and collect exit code, output tails and OOM state."""
    started = time.monotonic()
    container.start()
    exit_code = _wait(container, timeout_seconds)
    timed_out = exit_code is None
    memory_note = ""
    if timed_out:
        memory_note = _memory_at_limit(container)
        with contextlib.suppress(APIError):  # it may exit between the timeout and the kill
            container.kill()
        exit_code = container.wait()["StatusCode"]
    seconds = round(time.monotonic() - started, 3)
    container.reload()
    stdout = container.logs(stdout=True, stderr=False)[-OUTPUT_TAIL:].decode(errors="replace")
    stderr = container.logs(stdout=False, stderr=True)[-OUTPUT_TAIL:].decode(errors="replace")
    out_of_memory = bool(container.attrs["State"].get("OOMKilled")) or (
        exit_code == OOM_EXIT_CODE and not timed_out) or bool(memory_note)
    if timed_out:
        stderr += f"\nkilled after the {timeout_seconds} s timeout{memory_note}"
    elif out_of_memory:
        stderr += "\nkilled: out of memory"
    return InvocationResult(exit_code=exit_code, stdout=stdout, stderr=stderr, seconds=seconds,
                            timed_out=timed_out, out_of_memory=out_of_memory, isolation=CONTAINER_ISOLATION)
