"""The local runtime: each microservice as a subprocess of the worker, inside a bubblewrap sandbox.

The sandbox (``runtime.sandbox``) is what contains untrusted code on a machine without a container engine;
around it each run gets memory and CPU-time limits, a process limit, a timeout that kills it whole, and
captured output. Services run on this interpreter: a service whose pins it does not satisfy fails with the
missing names (uploads are refused for them; nothing is installed at run time).

``DAGSMITH_UNSAFE_NO_SANDBOX=1`` runs services as plain subprocesses, for trusted catalogs on machines
without bubblewrap; every try then says so in its log and the run's trace.
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

from dagsmith.runtime import sandbox
from dagsmith.runtime.base import Invocation, InvocationResult, Limits, materialise

KIT_DISTRIBUTION = "dagsmith-kit"  # provided by dagsmith itself (include/dagsmith_kit), never installed
KIT_PATH = Path(__file__).resolve().parents[2]  # the folder holding the dagsmith_kit package
OUTPUT_TAIL = 64 * 1024
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent dies
#: Looked up before any fork: loading a library in a forked child of a threaded worker could deadlock.
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl if sys.platform == "linux" else None
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^;\s]+)")
SANDBOXED = "bubblewrap sandbox"
UNSANDBOXED = f"NO SANDBOX ({sandbox.UNSANDBOXED_VARIABLE} is set: for trusted catalogs only)"


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

    def __init__(self, *, sandboxed: bool = True):
        self.sandboxed = sandboxed

    @property
    def isolated(self) -> bool:
        return self.sandboxed

    @property
    def isolation(self) -> str:
        return SANDBOXED if self.sandboxed else UNSANDBOXED

    def check(self) -> None:
        """Raise ``RuntimeUnavailable``, saying how to fix it, when services cannot be run safely here."""
        if self.sandboxed:
            sandbox.check()

    def run(self, invocation: Invocation) -> InvocationResult:
        unmet = unmet_requirements(invocation.requirements)
        if unmet:
            return InvocationResult(exit_code=-1, stdout="", seconds=0.0, isolation=self.isolation, stderr=(
                f"error: ModuleNotFoundError: this environment lacks {', '.join(unmet)}; dagsmith installs nothing "
                "at run time, an operator adds pins to runtime/requirements.txt and requirements.txt"))
        self.check()
        with tempfile.TemporaryDirectory(prefix=f"dagsmith-{invocation.service}-") as scratch:
            scratch_dir = Path(scratch)
            scratch_dir.chmod(0o755)
            service_dir = materialise(invocation.files, scratch_dir / "service")
            params_file = scratch_dir / "params.json"
            params_file.write_text(json.dumps(invocation.params, default=str), encoding="utf-8")
            params_file.chmod(0o444)
            invocation.output_dir.mkdir(parents=True, exist_ok=True)
            if not self.sandboxed:
                command = [sys.executable, str(service_dir / "main.py"), "--input", str(invocation.input_dir),
                           "--output", str(invocation.output_dir), "--params", str(params_file)]
                return _execute(command, _environment(scratch_dir, invocation.service, KIT_PATH), invocation.limits,
                                self.isolation, cwd=scratch_dir)
            uid = sandbox.run_uid()
            _hand_over(invocation, service_dir, uid)
            layout = sandbox.HostLayout(service_dir, params_file, invocation.input_dir, invocation.output_dir,
                                        KIT_PATH / "dagsmith_kit")
            argv = [sys.executable, f"{sandbox.SERVICE_DIR}/main.py", "--input", sandbox.INPUT_DIR,
                    "--output", sandbox.OUTPUT_DIR, "--params", sandbox.PARAMS_FILE]
            try:
                return _execute(sandbox.command(layout, invocation.limits, uid, argv),
                                _environment(Path("/tmp"), invocation.service, Path(sandbox.KIT_DIR)),
                                invocation.limits, self.isolation, cwd=scratch_dir)
            finally:
                if uid is not None:
                    _take_back(invocation.output_dir)


def _hand_over(invocation: Invocation, service_dir: Path, uid: int | None) -> None:
    """Make the service, params and input readable by the run's uid and the output folder its own."""
    for root in (service_dir, invocation.input_dir):
        for path in [root, *root.rglob("*")]:
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | (0o005 if path.is_dir() else 0o004))
    if uid is not None:
        os.chown(invocation.output_dir, uid, uid)


def _take_back(output: Path) -> None:
    """Give the worker back what the run's uid wrote (links are not followed: the service made them)."""
    for path in [output, *output.rglob("*")]:
        os.chown(path, os.geteuid(), os.getegid(), follow_symlinks=False)


def _environment(home: Path, service: str, kit: Path) -> dict[str, str]:
    """Only what Python needs: nothing of the caller's environment (API keys, database URLs) leaks in."""
    return {"DAGSMITH_SERVICE": service, "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(home), "LANG": "C.UTF-8", "PYTHONPATH": str(kit), "PYTHONDONTWRITEBYTECODE": "1",
            "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg",
            "MPLCONFIGDIR": str(home / ".matplotlib")}


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


def _execute(command: list[str], environment: dict[str, str], limits: Limits, isolation: str, *,
             cwd: Path) -> InvocationResult:
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=cwd, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True, preexec_fn=_limiter(limits))
    timed_out = False
    try:
        stdout, stderr = process.communicate(timeout=limits.timeout_seconds)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(process.pid, signal.SIGKILL)  # the sandbox's processes die with it (--die-with-parent)
        stdout, stderr = process.communicate()
    text_err = stderr.decode(errors="replace")[-OUTPUT_TAIL:]
    out_of_memory = "MemoryError" in text_err or "Cannot allocate memory" in text_err
    return InvocationResult(
        exit_code=process.returncode, stdout=stdout.decode(errors="replace")[-OUTPUT_TAIL:],
        stderr=text_err + (f"\nkilled after the {limits.timeout_seconds} s timeout" if timed_out else ""),
        seconds=round(time.monotonic() - started, 3), timed_out=timed_out, out_of_memory=out_of_memory,
        isolation=isolation,
    )
