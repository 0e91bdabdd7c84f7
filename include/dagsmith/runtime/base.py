"""The contract every runtime honours: ``python main.py --input IN --output OUT --params P.json``.

A runtime gets the service's files (as stored in the catalog), a read-only input bundle and an empty output
folder; it runs the code with limits and a timeout, and reports the exit code, the captured output and
whether a limit stopped it. It never passes the caller's environment (secrets) to the service.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from dagsmith.errors import ServiceUnavailable


#: Where the service's pieces appear to it, in a container and in the local sandbox alike.
SERVICE_DIR, PARAMS_FILE, INPUT_DIR, OUTPUT_DIR = "/service", "/params.json", "/input", "/output"


def contract_command(python: str) -> list[str]:
    """The contract's command line, run by ``python``, with the paths the service sees."""
    return [python, f"{SERVICE_DIR}/main.py", "--input", INPUT_DIR, "--output", OUTPUT_DIR, "--params", PARAMS_FILE]


@dataclass(frozen=True)
class Limits:
    """What one step may use. Memory counts all the step's processes and its private /tmp and /dev/shm together.

    The output caps bound what a step leaves on the host's disk. Each output is read whole by the next step, in
    memory, so 1 GiB of output (half the default memory) is already more than a next step could load; a file of
    512 MiB is the largest table or model that leaves that step room to work; 10,000 files is far above a
    bundle's handful of tables, models and plots, and bounds what the worker walks when it checks and copies it.
    """

    timeout_seconds: int = 900
    memory_mb: int = 2048
    cpus: float = 1.0
    max_processes: int = 64
    output_mb: int = 1024
    output_files: int = 10_000
    file_mb: int = 512


@dataclass(frozen=True)
class Invocation:
    service: str
    files: dict[str, str]
    input_dir: Path
    output_dir: Path
    params: dict[str, Any] = field(default_factory=dict)
    limits: Limits = Limits()
    #: Tags for the container (e.g. the try it runs), so leftovers of a dead worker can be found and removed.
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def requirements(self) -> list[str]:
        lines = (line.split("#", 1)[0].strip() for line in self.files.get("requirements.txt", "").splitlines())
        return sorted(line for line in lines if line)

    @property
    def code_hash(self) -> str:
        digest = hashlib.sha256()
        for name in sorted(self.files):
            digest.update(name.encode() + b"\0" + self.files[name].encode() + b"\0")
        return digest.hexdigest()[:16]


@dataclass(frozen=True)
class InvocationResult:
    exit_code: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    out_of_memory: bool = False
    #: What contained the service (a container, the bubblewrap sandbox, or nothing), for its log and the trace.
    isolation: str = ""
    #: The step's limit it went over and was killed for, in words ("" when none was).
    exceeded: str = ""
    #: The most memory the step held at once, in MB: its memory cgroup's peak (its processes and the files it kept
    #: in memory), None where the runtime cannot tell.
    peak_mb: int | None = None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.exceeded


class RuntimeUnavailable(ServiceUnavailable, RuntimeError):
    """The runtime cannot run anything here (no container engine, no socket); the message says how to fix it."""


class Runtime(Protocol):
    name: str

    @property
    def isolation(self) -> str:
        """What contains the services it runs, in words (shown in ``dagsmith serve``'s banner and each try's log)."""

    @property
    def isolated(self) -> bool:
        """False only when services run with no sandbox at all (an operator's explicit opt-out)."""

    def check(self) -> None:
        """Raise ``RuntimeUnavailable``, saying how to fix it, when nothing can be run here."""

    def run(self, invocation: Invocation) -> InvocationResult: ...


def materialise(files: dict[str, str], folder: Path) -> Path:
    """Write a service's files into ``folder`` (read-only afterwards) and return it."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        path.chmod(0o444)
    return folder


@dataclass(frozen=True)
class HostPaths:
    """Where one invocation's code and params live on the host, for the sandbox or container to mount."""

    service_dir: Path
    params_file: Path


def stage(invocation: Invocation, folder: Path) -> HostPaths:
    """Write the service's code and params under ``folder``, readable by the service's own uid (others). ``folder``
    stays private (0700, ``scratch.scratch_folder``): the sandbox or container mounts the code and params, so the
    service reaches them through the mounts, never through the folder, and nobody else on the machine reads them."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    service_dir = materialise(invocation.files, folder / "service")
    _grant(service_dir, 0o005, 0o004)
    params_file = folder / "params.json"
    params_file.write_text(json.dumps(invocation.params, default=str), encoding="utf-8")
    params_file.chmod(0o444)
    return HostPaths(service_dir, params_file)


def prepare_data_dirs(invocation: Invocation, uid: int | None) -> None:
    """Make the input bundle readable and the output folder the service's ``uid``'s own (None: the worker's).

    Owning it matters: ``Bundle.copy_into`` copies the input folder's mode and times onto the output folder,
    which only its owner may do. Without the right to chown (non-root host) it falls back to mode 0o777.
    """
    _grant(invocation.input_dir, 0o005, 0o004)
    invocation.output_dir.mkdir(parents=True, exist_ok=True)
    if uid is None:
        return
    try:
        os.chown(invocation.output_dir, uid, uid)
    except PermissionError:
        invocation.output_dir.chmod(0o777)


def _grant(root: Path, dir_bits: int, file_bits: int) -> None:
    """Add permission bits to every entry under ``root`` (pytest and mkdtemp folders are 0700); links are left
    alone, since chmod would change what they point at."""
    for path in [root, *root.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | (dir_bits if path.is_dir() else file_bits))
