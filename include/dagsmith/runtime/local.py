"""The local runtime: a microservice as a subprocess, for machines without a container engine.

Each run gets a scrubbed environment (no secrets from the caller), its own process group (killed whole on
timeout), memory and CPU-time limits, and captured output. Requirements are honoured by an environment per
requirements hash: the current interpreter when it already satisfies every pin, otherwise a cached venv
under ``DAGSMITH_HOME/envs``. Network isolation, a read-only input and a non-root user need the container
runtime; this one is for trusted catalogs and development.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

from dagsmith.runtime.base import Invocation, InvocationResult, Limits, materialise

KIT_DISTRIBUTION = "dagsmith-kit"  # provided by dagsmith itself (include/dagsmith_kit), never installed
KIT_PATH = Path(__file__).resolve().parents[2]  # the folder holding the dagsmith_kit package
OUTPUT_TAIL = 64 * 1024
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent dies
#: Looked up before any fork: loading a library in a forked child of a threaded worker could deadlock.
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl if sys.platform == "linux" else None
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^;\s]+)")


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def unmet_requirements(requirements: list[str]) -> list[str]:
    """Pins the current interpreter does not satisfy (dagsmith-kit is always satisfied)."""
    unmet = []
    for line in requirements:
        match = _PIN.match(line)
        if not match or _normalise(match.group(1)) == KIT_DISTRIBUTION:
            continue
        try:
            installed = metadata.version(match.group(1))
        except metadata.PackageNotFoundError:
            installed = None
        if installed != match.group(2):
            unmet.append(line)
    return unmet


class LocalRuntime:
    name = "local"

    def __init__(self, envs_dir: Path):
        self.envs_dir = envs_dir

    def python_for(self, invocation: Invocation) -> str:
        """The interpreter that satisfies the service's pins, creating (once) a venv when needed."""
        unmet = unmet_requirements(invocation.requirements)
        if not unmet:
            return sys.executable
        env_dir = self.envs_dir / invocation.requirements_hash
        python = env_dir / "bin" / "python"
        if not (env_dir / ".ready").exists():
            subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(env_dir)], check=True)
            pins = [r for r in invocation.requirements if _normalise(_PIN.match(r).group(1)) != KIT_DISTRIBUTION]
            subprocess.run([str(python), "-m", "pip", "install", "--quiet", *pins], check=True, timeout=1800)
            (env_dir / ".ready").touch()
        return str(python)

    def run(self, invocation: Invocation) -> InvocationResult:
        python = self.python_for(invocation)
        with tempfile.TemporaryDirectory(prefix=f"dagsmith-{invocation.service}-") as scratch:
            scratch_dir = Path(scratch)
            service_dir = materialise(invocation.files, scratch_dir / "service")
            params_file = scratch_dir / "params.json"
            params_file.write_text(json.dumps(invocation.params, default=str), encoding="utf-8")
            invocation.output_dir.parent.mkdir(parents=True, exist_ok=True)
            command = [python, str(service_dir / "main.py"), "--input", str(invocation.input_dir),
                       "--output", str(invocation.output_dir), "--params", str(params_file)]
            return _execute(command, scratch_dir, invocation.service, invocation.limits)


def _environment(home: Path, service: str) -> dict[str, str]:
    """Only what Python needs: nothing of the caller's environment (API keys, database URLs) leaks in."""
    return {"DAGSMITH_SERVICE": service,
        "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8", "PYTHONPATH": str(KIT_PATH),
        "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
        "MPLBACKEND": "Agg", "MPLCONFIGDIR": str(home / ".matplotlib"),
    }


def _limiter(limits: Limits):
    parent = os.getpid()

    def apply() -> None:
        _die_with(parent)
        memory = limits.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        cpu = max(1, int(limits.timeout_seconds * max(limits.cpus, 1)))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
    return apply


def _die_with(parent: int) -> None:
    """Have the kernel kill this service when its worker dies (Linux): the service runs in a session of its own,
    so a kill -9 of the worker's process group would otherwise leave it running, writing into the workspace."""
    if _PRCTL is None:
        return
    _PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the worker died before the request took effect
        os._exit(1)


def _execute(command: list[str], home: Path, service: str, limits: Limits) -> InvocationResult:
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=home, env=_environment(home, service), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, start_new_session=True, preexec_fn=_limiter(limits))
    timed_out = False
    try:
        stdout, stderr = process.communicate(timeout=limits.timeout_seconds)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
    text_err = stderr.decode(errors="replace")[-OUTPUT_TAIL:]
    out_of_memory = "MemoryError" in text_err or "Cannot allocate memory" in text_err
    return InvocationResult(
        exit_code=process.returncode, stdout=stdout.decode(errors="replace")[-OUTPUT_TAIL:],
        stderr=text_err + (f"\nkilled after the {limits.timeout_seconds} s timeout" if timed_out else ""),
        seconds=round(time.monotonic() - started, 3), timed_out=timed_out, out_of_memory=out_of_memory,
    )
