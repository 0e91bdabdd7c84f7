"""The contract every runtime honours: ``python main.py --input IN --output OUT --params P.json``.

A runtime gets the service's files (as stored in the catalog), a read-only input bundle and an empty output
folder; it runs the code with limits and a timeout, and reports the exit code, the captured output and
whether a limit stopped it. It never passes the caller's environment (secrets) to the service.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True)
class Limits:
    timeout_seconds: int = 900
    memory_mb: int = 2048
    cpus: float = 1.0
    max_processes: int = 64


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
    def requirements_hash(self) -> str:
        return hashlib.sha256("\n".join(self.requirements).encode()).hexdigest()[:16]

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

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


class RuntimeUnavailable(RuntimeError):
    """The runtime cannot run anything here (no container engine, no socket); the message says how to fix it."""


class Runtime(Protocol):
    name: str
    #: What contains the services it runs, in words (shown in ``dagsmith serve``'s banner and each try's log).
    isolation: str
    #: False only when services run with no sandbox at all (an operator's explicit opt-out).
    isolated: bool

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
