"""The container runtime: each invocation in its own container, through any Docker-API endpoint.

Catalog services are untrusted code, so the container gives them no network, a read-only root filesystem,
a non-root uid, memory/CPU/process budgets and none of the caller's environment. The endpoint is Docker or
podman's Docker-compatible service (``scripts/setup-container-runtime.sh`` prepares it and the runtime image).

:class:`ContainerSpec` is the one source of truth for image, mounts, limits, command and environment: both
:meth:`DockerRuntime.run` and :meth:`DockerRuntime.docker_operator_kwargs` (Airflow's ``DockerOperator``)
are derived from it.
"""

from __future__ import annotations

import contextlib
import json
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
from docker.errors import APIError, BuildError, DockerException, ImageNotFound, NotFound
from docker.models.containers import Container
from docker.models.images import Image
from docker.types import Mount

from dagsmith.runtime.base import Invocation, InvocationResult, RuntimeUnavailable, materialise

RUNTIME_IMAGE = "dagsmith-runtime:py311"
DEFAULT_SOCKET = "/run/dagsmith/podman.sock"
SETUP_HINT = ("run scripts/setup-container-runtime.sh (as root); it starts podman's Docker API on "
              f"unix://{DEFAULT_SOCKET} (or $DAGSMITH_PODMAN_SOCKET) and builds {RUNTIME_IMAGE}")
SERVICE_UID = 10001
SERVICE_USER = f"{SERVICE_UID}:{SERVICE_UID}"
COMMAND = ["python", "/service/main.py", "--input", "/input", "--output", "/output", "--params", "/params.json"]
ENVIRONMENT = {
    "PATH": "/opt/venv/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1",
    "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    "MPLBACKEND": "Agg", "MPLCONFIGDIR": "/tmp/matplotlib",
}
OUTPUT_TAIL = 64 * 1024
OOM_EXIT_CODE = 137  # 128 + SIGKILL: what the kernel's OOM killer leaves behind
BUILD_FAILED_EXIT_CODE = 125  # Docker's code for "the container could not be run"
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^;\s]+)$")
_FREEZES: dict[str, frozenset[str]] = {}  # image id -> normalised `name==version` lines; ids are immutable


@dataclass(frozen=True)
class HostPaths:
    """Where one invocation's code and params live on the host that starts the container."""

    service_dir: Path
    params_file: Path


def stage(invocation: Invocation, folder: Path) -> HostPaths:
    """Write the service's code and params under ``folder``, readable by the container's uid (others)."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)
    service_dir = materialise(invocation.files, folder / "service")
    _grant(service_dir, 0o005, 0o004)
    params_file = folder / "params.json"
    params_file.write_text(json.dumps(invocation.params, default=str), encoding="utf-8")
    params_file.chmod(0o444)
    return HostPaths(service_dir, params_file)


def prepare_data_dirs(invocation: Invocation) -> None:
    """Make the input bundle readable and the output folder the service user's own.

    Owning it matters: ``Bundle.copy_into`` copies the input folder's mode and times onto the output folder,
    which only its owner may do. Without the right to chown (non-root host) it falls back to mode 0o777.
    """
    _grant(invocation.input_dir, 0o005, 0o004)
    invocation.output_dir.mkdir(parents=True, exist_ok=True)
    try:
        os.chown(invocation.output_dir, SERVICE_UID, SERVICE_UID)
    except PermissionError:
        invocation.output_dir.chmod(0o777)


def _grant(root: Path, dir_bits: int, file_bits: int) -> None:
    """Add permission bits to every entry under ``root`` (pytest and mkdtemp folders are 0700)."""
    for path in [root, *root.rglob("*")]:
        path.chmod(path.stat().st_mode | (dir_bits if path.is_dir() else file_bits))


@dataclass(frozen=True)
class ContainerSpec:
    """Everything that defines how an invocation runs in a container."""

    image: str
    mounts: tuple[Mount, ...]
    mem_limit: str
    nano_cpus: int
    pids_limit: int
    labels: dict[str, str]

    @classmethod
    def of(cls, invocation: Invocation, host: HostPaths, image: str) -> ContainerSpec:
        limits = invocation.limits
        mounts = (
            Mount("/service", str(host.service_dir), type="bind", read_only=True),
            Mount("/params.json", str(host.params_file), type="bind", read_only=True),
            Mount("/input", str(invocation.input_dir.resolve()), type="bind", read_only=True),
            Mount("/output", str(invocation.output_dir.resolve()), type="bind", read_only=False),
            Mount("/tmp", None, type="tmpfs", tmpfs_size=limits.memory_mb * 1024 * 1024, tmpfs_mode=0o1777),
        )
        return cls(image=image, mounts=mounts, mem_limit=f"{limits.memory_mb}m",
                   nano_cpus=int(limits.cpus * 1e9), pids_limit=limits.max_processes,
                   labels={**invocation.labels, "dagsmith.service": invocation.service,
                           "dagsmith.code_hash": invocation.code_hash})

    def environment(self) -> dict[str, str]:
        """The container's whole environment: what Python needs and the service's name, nothing of the host's."""
        return {**ENVIRONMENT, "DAGSMITH_SERVICE": self.labels["dagsmith.service"]}

    def create_kwargs(self) -> dict[str, Any]:
        """Arguments of docker-py ``containers.create``."""
        return {
            "image": self.image, "command": COMMAND, "user": SERVICE_USER, "environment": self.environment(),
            "mounts": list(self.mounts), "network_mode": "none", "mem_limit": self.mem_limit,
            "memswap_limit": self.mem_limit, "nano_cpus": self.nano_cpus, "pids_limit": self.pids_limit,
            "read_only": True, "cap_drop": ["ALL"], "security_opt": ["no-new-privileges"],
            "working_dir": "/tmp", "labels": self.labels,
        }

    def operator_kwargs(self, docker_url: str, timeout_seconds: int) -> dict[str, Any]:
        """Arguments of Airflow's ``DockerOperator`` (providers-docker 4.6.1) for the same container.

        DockerOperator cannot express ``pids_limit``, ``read_only``, ``cap_drop``, ``security_opt`` or
        ``memswap_limit``, and turns ``cpus`` into relative ``cpu_shares`` rather than a hard quota.
        """
        return {
            "image": self.image, "command": COMMAND, "user": SERVICE_USER, "environment": self.environment(),
            "mounts": list(self.mounts), "network_mode": "none", "mem_limit": self.mem_limit,
            "cpus": self.nano_cpus / 1e9, "working_dir": "/tmp", "labels": self.labels,
            "docker_url": docker_url, "auto_remove": "force", "mount_tmp_dir": False, "force_pull": False,
            "execution_timeout": timedelta(seconds=timeout_seconds),
        }


class ImageBuildFailed(RuntimeError):
    """The service's pinned requirements could not be installed on top of the runtime image."""


class DockerRuntime:
    """Runs invocations as containers on a Docker-API endpoint (``base_url``, else DOCKER_HOST, else podman)."""

    name = "docker"

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
        self._runtime_image()

    def run(self, invocation: Invocation) -> InvocationResult:
        try:
            image = self.image_for(invocation)
        except ImageBuildFailed as error:
            return InvocationResult(exit_code=BUILD_FAILED_EXIT_CODE, stdout="", stderr=f"error: {error}",
                                    seconds=0.0)
        prepare_data_dirs(invocation)
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
        ``host_paths``; builds the service image now so the task never builds."""
        prepare_data_dirs(invocation)
        spec = ContainerSpec.of(invocation, host_paths, self.image_for(invocation))
        return spec.operator_kwargs(self.base_url, invocation.limits.timeout_seconds)

    def image_for(self, invocation: Invocation) -> str:
        """The runtime image when it satisfies every pin, else ``dagsmith-svc:<requirements_hash>`` (built once)."""
        runtime = self._runtime_image()
        if not _unmet(invocation.requirements, self._freeze(runtime)):
            return self.image
        tag = f"dagsmith-svc:{invocation.requirements_hash}"
        try:
            if self.client.images.get(tag).labels.get("dagsmith.base") == runtime.id:
                return tag
        except ImageNotFound:
            pass
        self._build(tag, runtime, invocation.requirements)
        return tag

    def _runtime_image(self) -> Image:
        try:
            return self.client.images.get(self.image)
        except ImageNotFound as error:
            raise RuntimeUnavailable(f"the runtime image {self.image} is missing; {SETUP_HINT}") from error

    def _freeze(self, image: Image) -> frozenset[str]:
        """What the image's venv holds, asked once per image id (a container start costs about a second)."""
        if image.id not in _FREEZES:
            output = self.client.containers.run(image.id, ["pip", "freeze", "--all"], network_mode="none",
                                                remove=True, stdout=True, stderr=False)
            _FREEZES[image.id] = frozenset(filter(None, map(_pin_key, output.decode().splitlines())))
        return _FREEZES[image.id]

    def _build(self, tag: str, runtime: Image, requirements: list[str]) -> None:
        """Derive an image that pip-installs the pins; all pins go to pip so it keeps the satisfied ones."""
        with tempfile.TemporaryDirectory(prefix="dagsmith-build-") as folder:
            context = Path(folder)
            (context / "requirements.txt").write_text("\n".join(requirements) + "\n", encoding="utf-8")
            # This machine reaches PyPI through a TLS proxy only the host's CA bundle trusts.
            (context / "pip-ca.crt").write_bytes(HOST_CA_BUNDLE.read_bytes() if HOST_CA_BUNDLE.exists() else b"")
            (context / "Dockerfile").write_text(
                f"FROM {runtime.id}\nUSER root\nCOPY requirements.txt pip-ca.crt /opt/dagsmith-build/\n"
                "RUN pip install --no-input --disable-pip-version-check --cert /opt/dagsmith-build/pip-ca.crt"
                " -r /opt/dagsmith-build/requirements.txt\n"
                f"USER {SERVICE_USER}\n", encoding="utf-8")
            try:
                self.client.images.build(path=folder, tag=tag, network_mode="host", rm=True, forcerm=True,
                                         labels={"dagsmith.base": runtime.id})
            except BuildError as error:
                log = "".join(str(chunk.get("stream") or chunk.get("error") or "") for chunk in error.build_log)
                raise ImageBuildFailed(f"could not install {requirements}: {log[-OUTPUT_TAIL:]}") from error


def _pin_key(line: str) -> str | None:
    """``name==version`` with the name normalised (PEP 503), or None for anything that is not an exact pin."""
    match = _PIN.match(line.strip())
    return f"{re.sub(r'[-_.]+', '-', match.group(1)).lower()}=={match.group(2)}" if match else None


def _unmet(requirements: list[str], installed: frozenset[str]) -> list[str]:
    return [line for line in requirements if _pin_key(line) not in installed]


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


def _execute(container: Container, timeout_seconds: int) -> InvocationResult:
    """Start, wait with the timeout (kill on expiry), and collect exit code, output tails and OOM state."""
    started = time.monotonic()
    container.start()
    exit_code = _wait(container, timeout_seconds)
    timed_out = exit_code is None
    if timed_out:
        with contextlib.suppress(APIError):  # it may exit between the timeout and the kill
            container.kill()
        exit_code = container.wait()["StatusCode"]
    seconds = round(time.monotonic() - started, 3)
    container.reload()
    stdout = container.logs(stdout=True, stderr=False)[-OUTPUT_TAIL:].decode(errors="replace")
    stderr = container.logs(stdout=False, stderr=True)[-OUTPUT_TAIL:].decode(errors="replace")
    out_of_memory = bool(container.attrs["State"].get("OOMKilled")) or (
        exit_code == OOM_EXIT_CODE and not timed_out)
    if timed_out:
        stderr += f"\nkilled after the {timeout_seconds} s timeout"
    elif out_of_memory:
        stderr += "\nkilled: out of memory"
    return InvocationResult(exit_code=exit_code, stdout=stdout, stderr=stderr, seconds=seconds,
                            timed_out=timed_out, out_of_memory=out_of_memory)
