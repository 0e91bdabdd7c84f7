"""The container runtime: each invocation in its own container, through any Docker-API endpoint.

Catalog services are untrusted code, so the container gives them no network, a read-only root filesystem,
a non-root uid, memory/CPU/process budgets (the memory limit covers all its processes and its /tmp), caps on
its output folder, a system-call filter and none of the caller's environment. The endpoint is Docker or
podman's Docker-compatible service (``scripts/setup-container-runtime.sh`` prepares it and the runtime image).
Every service runs in that one image: nothing is built or installed for a service (see ``runtime.packages``).

In a pipeline's Airflow DAG each step is Airflow's own ``DockerOperator`` (``airflow.step_operator``), which
creates, streams and removes the container; elsewhere (the benchmark's in-process runs) :func:`drive_directly`
does the same calls. Both go through a :class:`ContainerWatch`, the one place that adds the sandbox limits,
enforces the timeout and reads the outcome, and both take the container's definition from :class:`ContainerSpec`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import requests
from docker.errors import APIError, DockerException, ImageNotFound, NotFound
from docker.types import Mount

from dagsmith.runtime import guard, seccomp
from dagsmith.runtime.base import (INPUT_DIR, OUTPUT_DIR, PARAMS_FILE, SERVICE_DIR, HostPaths, Invocation,
                                   InvocationResult, Limits, RuntimeUnavailable, contract_command, prepare_data_dirs,
                                   stage)
from dagsmith.runtime.packages import not_provided, unavailable
from dagsmith.scratch import scratch_folder

RUNTIME_IMAGE = "dagsmith-runtime:py311"
DEFAULT_SOCKET = "/run/dagsmith/podman.sock"
SETUP_HINT = ("run scripts/setup-container-runtime.sh (as root); it starts podman's Docker API on "
              f"unix://{DEFAULT_SOCKET} (or $DAGSMITH_PODMAN_SOCKET) and builds {RUNTIME_IMAGE}")
#: An Airflow connection (type docker) whose registry and credentials the steps' operators log in with.
CONNECTION_VARIABLE = "DAGSMITH_DOCKER_CONN_ID"
SERVICE_UID = 10001
SERVICE_USER = f"{SERVICE_UID}:{SERVICE_UID}"
COMMAND = contract_command("python")
ENVIRONMENT = {
    "PATH": "/opt/venv/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1",
    "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    "MPLBACKEND": "Agg", "MPLCONFIGDIR": "/tmp/matplotlib",
}
WORKING_DIR = "/tmp"
OUTPUT_TAIL = 64 * 1024
CONTAINER_ISOLATION = "container (no network, read-only root and input, non-root)"
OOM_EXIT_CODE = 137  # 128 + SIGKILL: what the kernel's OOM killer leaves behind
AT_LIMIT = 0.9  # a container this close to its memory limit when its time runs out was thrashing, not working
NOT_RUN_EXIT_CODE = 125  # Docker's code for "the container could not be run"
#: Seconds one Docker API call may take (a busy podman can be slow to create a container); following a
#: container's output has no timeout, and ``wait`` is called once the output has ended.
API_TIMEOUT_SECONDS = 600


def memory_limit(limits: Limits) -> str:
    return f"{limits.memory_mb}m"


def sandbox_kwargs(limits: Limits, seccomp_option: str | None = None) -> dict[str, Any]:
    """The host-config limits Airflow's ``DockerOperator`` has no arguments for (its containers get them through
    :class:`ContainerWatch`, an exported pipeline's through its own client): no swap, a hard CPU quota, a process
    cap, a read-only root, no capabilities, and the system-call filter ``seccomp_option`` when given."""
    options = ["no-new-privileges", *([f"seccomp={seccomp_option}"] if seccomp_option else [])]
    return {"memswap_limit": memory_limit(limits), "nano_cpus": int(limits.cpus * 1e9),
            "pids_limit": limits.max_processes, "read_only": True, "cap_drop": ["ALL"], "security_opt": options}


def seccomp_option(client: docker.APIClient, profile: Path) -> str:
    """How the engine takes the profile written at ``profile``: Docker wants the JSON itself (its CLI reads the
    file), podman's Docker API opens the value as a path on its own host (the one the bind mounts come from)."""
    if client.base_url not in _PODMAN:
        components = client.version().get("Components") or []
        _PODMAN[client.base_url] = any("podman" in (part.get("Name") or "").lower() for part in components)
    return str(profile) if _PODMAN[client.base_url] else profile.read_text(encoding="utf-8")


#: Whether the engine at each endpoint is podman, asked once per endpoint.
_PODMAN: dict[str, bool] = {}


@dataclass(frozen=True)
class ContainerSpec:
    """Everything that defines how an invocation runs in a container."""

    image: str
    mounts: tuple[Mount, ...]
    limits: Limits
    labels: dict[str, str]
    name: str
    #: The system-call filter (``seccomp.container_profile``), written beside the service's staged code.
    seccomp_profile: Path

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
        name = f"dagsmith-{re.sub(r'[^a-zA-Z0-9_.-]', '-', invocation.service)}-{uuid.uuid4().hex[:8]}"
        profile = host.params_file.parent / "seccomp.json"
        profile.write_text(json.dumps(seccomp.container_profile()), encoding="utf-8")
        return cls(image=image, mounts=mounts, limits=limits, name=name, seccomp_profile=profile,
                   labels={**invocation.labels, "dagsmith.service": invocation.service,
                           "dagsmith.code_hash": invocation.code_hash})

    @property
    def output(self) -> Path:
        """The host folder mounted as the service's output."""
        return Path(next(mount["Source"] for mount in self.mounts if mount["Target"] == OUTPUT_DIR))

    def environment(self) -> dict[str, str]:
        """The container's whole environment: what Python needs and the service's name, nothing of the host's."""
        return {**ENVIRONMENT, "DAGSMITH_SERVICE": self.labels["dagsmith.service"]}

    def operator_fields(self) -> dict[str, Any]:
        """The ``DockerOperator`` (providers-docker 4.6) attributes that run this container; the operator turns
        ``cpus`` into relative CPU shares, and :func:`sandbox_kwargs` adds the hard quota and the rest."""
        return {"image": self.image, "command": COMMAND, "user": SERVICE_USER, "environment": self.environment(),
                "mounts": list(self.mounts), "network_mode": "none", "mem_limit": memory_limit(self.limits),
                "cpus": self.limits.cpus, "working_dir": WORKING_DIR, "labels": self.labels,
                "container_name": self.name, "auto_remove": "force", "mount_tmp_dir": False}


class ContainerWatch:
    """A Docker API client (``docker.APIClient``) that watches the one container it is used for.

    Every container it creates also gets :func:`sandbox_kwargs` and the spec's system-call filter; once started
    it is killed when its time is up (noting when it was at its memory limit, which is how a service short of
    memory usually looks without swap) or when its output passes the output caps (``runtime.guard``); and
    ``wait`` keeps the exit code and each stream's tail before the container is removed. Other calls pass
    through, so ``DockerOperator`` can use it as its client.
    """

    def __init__(self, client: docker.APIClient, spec: ContainerSpec):
        self._client, self._spec, self._limits = client, spec, spec.limits
        self._timer: threading.Timer | None = None
        self._guard = guard.StepGuard(spec.limits, spec.output)
        self._started = 0.0
        self._timed_out, self._memory_note = False, ""
        self.result: InvocationResult | None = None

    def create_host_config(self, **kwargs: Any) -> dict:
        option = seccomp_option(self._client, self._spec.seccomp_profile)
        return self._client.create_host_config(**kwargs, **sandbox_kwargs(self._limits, option))

    def start(self, container: Any, *args: Any, **kwargs: Any) -> None:
        self._client.start(container, *args, **kwargs)
        self._started = time.monotonic()
        self._timer = threading.Timer(self._limits.timeout_seconds, self._expire, (container,))
        self._timer.daemon = True
        self._timer.start()
        self._guard.start(functools.partial(self._kill, container))

    def wait(self, container: Any, *args: Any, **kwargs: Any) -> dict:
        try:
            status = self._client.wait(container, *args, **kwargs)
        finally:
            if self._timer:
                self._timer.cancel()
            exceeded = self._guard.finish()
        self.result = self._outcome(container, int(status["StatusCode"]), exceeded)
        return status

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def _expire(self, container: Any) -> None:
        self._timed_out = True
        self._memory_note = _memory_at_limit(self._client, container)
        self._kill(container)

    def _kill(self, container: Any) -> None:
        with contextlib.suppress(APIError):  # it may exit between the decision and the kill
            self._client.kill(container)

    def _outcome(self, container: Any, exit_code: int, exceeded: str) -> InvocationResult:
        seconds = round(time.monotonic() - self._started, 3)
        stdout, stderr = (self._client.logs(container, stdout=out, stderr=not out)[-OUTPUT_TAIL:]
                          .decode(errors="replace") for out in (True, False))
        killed = bool(self._client.inspect_container(container)["State"].get("OOMKilled"))
        exceeded = "" if self._timed_out else exceeded
        out_of_memory = (killed or (exit_code == OOM_EXIT_CODE and not self._timed_out and not exceeded)
                         or bool(self._memory_note))
        if self._timed_out:
            stderr += f"\nkilled after the {self._limits.timeout_seconds} s timeout{self._memory_note}"
        elif exceeded:
            stderr += f"\nkilled: {exceeded}"
        elif out_of_memory:
            stderr += "\nkilled: out of memory"
        return InvocationResult(exit_code=exit_code, stdout=stdout, stderr=stderr, seconds=seconds,
                                timed_out=self._timed_out, out_of_memory=out_of_memory,
                                isolation=CONTAINER_ISOLATION, exceeded=exceeded)


#: Runs the container ``spec`` defines and removes it; returns its outcome (None: stopped before it ended).
Driver = Callable[[ContainerSpec], InvocationResult | None]


def drive_directly(spec: ContainerSpec, watch: ContainerWatch) -> None:
    """The calls ``DockerOperator`` makes, for runs outside Airflow: create, attach, start, drain the output,
    wait (the output ends when the container does: podman 4.3's ``wait`` alone keeps a core busy,
    containers/podman#18150), remove."""
    fields = spec.operator_fields()
    host_config = watch.create_host_config(mounts=fields["mounts"], network_mode=fields["network_mode"],
                                           mem_limit=fields["mem_limit"], cpu_shares=round(spec.limits.cpus * 1024))
    container = watch.create_container(
        image=spec.image, command=COMMAND, name=spec.name, environment=fields["environment"], user=SERVICE_USER,
        working_dir=WORKING_DIR, labels=spec.labels, host_config=host_config)
    try:
        output = watch.attach(container, stdout=True, stderr=True, stream=True)
        watch.start(container)
        for _ in output:
            pass
        watch.wait(container)
    finally:
        watch.remove_container(container, force=True)


class PinsUnavailable(RuntimeError):
    """The service pins packages the runtime image does not provide (a catalog row stored before uploads were
    held to the runtime's packages); the message names them."""


class DockerRuntime:
    """Runs invocations as containers on a Docker-API endpoint (``base_url``, else DOCKER_HOST, else podman).

    ``driver`` runs each container; without one, :func:`drive_directly` does (an Airflow step's operator drives
    its own).
    """

    name = "docker"
    isolation = CONTAINER_ISOLATION
    isolated = True

    def __init__(self, base_url: str | None = None, image: str = RUNTIME_IMAGE, *, driver: Driver | None = None):
        socket = os.environ.get("DAGSMITH_PODMAN_SOCKET", DEFAULT_SOCKET)
        self.base_url = base_url or os.environ.get("DOCKER_HOST") or f"unix://{socket}"
        self.image = image
        self.driver = driver
        self._api: docker.APIClient | None = None

    @property
    def api(self) -> docker.APIClient:
        """A connected client; connecting lazily lets code construct the runtime where no engine runs."""
        if self._api is None:
            try:
                client = docker.APIClient(base_url=self.base_url, timeout=API_TIMEOUT_SECONDS)
                client.ping()
            except (DockerException, requests.RequestException) as error:
                raise RuntimeUnavailable(f"no container engine answers on {self.base_url} ({error}); "
                                         f"{SETUP_HINT}") from error
            self._api = client
        return self._api

    def check(self) -> None:
        """Raise ``RuntimeUnavailable``, saying how to fix it, unless the engine answers and has the runtime image."""
        try:
            self.api.inspect_image(self.image)
        except ImageNotFound as error:
            raise RuntimeUnavailable(f"the runtime image {self.image} is missing; {SETUP_HINT}") from error

    def run(self, invocation: Invocation) -> InvocationResult:
        try:
            image = self.image_for(invocation)
        except PinsUnavailable as error:
            return InvocationResult(exit_code=NOT_RUN_EXIT_CODE, stdout="", stderr=f"error: {error}", seconds=0.0)
        prepare_data_dirs(invocation, SERVICE_UID)
        with scratch_folder(f"dagsmith-{invocation.service}-") as scratch:
            spec = ContainerSpec.of(invocation, stage(invocation, scratch), image)
            result = self.driver(spec) if self.driver else self._drive(spec)
        return result or InvocationResult(exit_code=-1, stdout="", stderr="the container was stopped before "
                                                "it finished", seconds=0.0, isolation=CONTAINER_ISOLATION)

    def _drive(self, spec: ContainerSpec) -> InvocationResult | None:
        watch = ContainerWatch(self.api, spec)
        drive_directly(spec, watch)
        return watch.result

    def remove_labelled(self, label: str, values: list[str]) -> int:
        """Force-remove the containers whose ``label`` is one of ``values`` (running or not); returns how many."""
        wanted = set(values)
        found = [c["Id"] for c in self.api.containers(all=True, filters={"label": label})
                 if (c.get("Labels") or {}).get(label) in wanted]
        for container in found:
            with contextlib.suppress(NotFound):  # removed meanwhile by its own worker's cleanup
                self.api.remove_container(container, force=True)
        return len(found)

    def image_for(self, invocation: Invocation) -> str:
        """The runtime image, when it provides every pin of the service and the engine has it."""
        missing = unavailable(invocation.requirements)
        if missing:
            raise PinsUnavailable(not_provided(missing))
        self.check()
        return self.image


def _memory_at_limit(client: docker.APIClient, container: Any) -> str:
    """Why a timed-out container ran out of time, when it was at its memory limit: without swap the kernel
    can page a process's code in and out for minutes before its OOM killer acts, so a service that needs
    more memory than it has may reach its timeout first, and the person reading the log should know."""
    try:
        memory = client.stats(container, stream=False).get("memory_stats") or {}
    except (APIError, requests.RequestException):
        return ""
    usage, limit = memory.get("usage") or 0, memory.get("limit") or 0
    if not limit or usage < AT_LIMIT * limit:
        return ""
    return f" while at its memory limit ({usage >> 20} of {limit >> 20} MiB): out of memory"
