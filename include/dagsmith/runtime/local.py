"""The local runtime: each microservice as a subprocess of the worker, inside a bubblewrap sandbox.

The sandbox (``runtime.sandbox``) is what contains untrusted code on a machine without a container engine;
around it each run gets a memory limit for all its processes and its ``/tmp`` together (a cgroup of its own
where the host allows one, see ``runtime.guard``) besides each process's address space, a CPU-time limit, a
process limit, caps on its output (a watcher kills it past the total size or file count, RLIMIT_FSIZE stops a
file at its size), a timeout that kills it whole, and captured output. A run killed at a limit says which in
its result (``exceeded``) and its stderr. Services run on this interpreter, whose packages are the runtime's
pinned set (``runtime.packages``): a service pinning anything else fails with the names, and nothing is ever
installed.

``DAGSMITH_UNSAFE_NO_SANDBOX=1`` runs services as plain subprocesses, for trusted catalogs on machines
without bubblewrap; every try then says so in its log and the run's trace.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

from dagsmith.runtime import guard, sandbox, seccomp
from dagsmith.runtime.base import Invocation, InvocationResult, Limits, contract_command, prepare_data_dirs, stage
from dagsmith.runtime.packages import not_provided, unavailable
from dagsmith.scratch import scratch_folder

KIT_PATH = Path(__file__).resolve().parents[2]  # the folder holding the dagsmith_kit package
OUTPUT_TAIL = 64 * 1024
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent dies
#: Looked up before any fork: loading a library in a forked child of a threaded worker could deadlock.
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl if sys.platform == "linux" else None
SANDBOXED = "bubblewrap sandbox"
UNSANDBOXED = f"NO SANDBOX ({sandbox.UNSANDBOXED_VARIABLE} is set: for trusted catalogs only)"


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
        missing = unavailable(invocation.requirements)
        if missing:  # only a service stored before uploads were held to the runtime's packages
            return InvocationResult(exit_code=-1, stdout="", stderr=f"error: {not_provided(missing)}", seconds=0.0,
                                    isolation=self.isolation)
        self.check()
        with (scratch_folder(f"dagsmith-{invocation.service}-") as scratch_dir,
              guard.memory_cgroup(invocation.limits) as cgroup):
            host = stage(invocation, scratch_dir)
            if not self.sandboxed:
                invocation.output_dir.mkdir(parents=True, exist_ok=True)
                command = [sys.executable, str(host.service_dir / "main.py"), "--input", str(invocation.input_dir),
                           "--output", str(invocation.output_dir), "--params", str(host.params_file)]
                return _execute(command, _environment(scratch_dir, invocation.service, KIT_PATH), invocation,
                                self.isolation, cwd=scratch_dir, cgroup=cgroup)
            uid = sandbox.run_uid()
            prepare_data_dirs(invocation, uid)
            fd = seccomp.program_fd() if seccomp.supported() else None
            try:
                command = sandbox.command(invocation, host, uid, contract_command(sys.executable), seccomp=fd,
                                          bounded=cgroup is not None)
                return _execute(command, _environment(Path("/tmp"), invocation.service, Path(sandbox.KIT_DIR)),
                                invocation, self.isolation, cwd=scratch_dir, cgroup=cgroup,
                                pass_fds=() if fd is None else (fd,))
            finally:
                if fd is not None:
                    os.close(fd)
                if uid is not None:
                    _take_back(invocation.output_dir)


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


def _limiter(limits: Limits, cgroup: guard.Cgroup | None):
    parent = os.getpid()

    def apply() -> None:
        _die_with(parent)
        if cgroup is not None:  # before exec: everything the step starts is born inside it
            cgroup.join()
        memory = limits.memory_mb * guard.MIB
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        cpu = max(1, int(limits.timeout_seconds * max(limits.cpus, 1)))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
        size = limits.file_mb * guard.MIB
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    return apply


def _die_with(parent: int) -> None:
    """Have the kernel kill this service when its worker dies (Linux): the service runs in a session of its own,
    so a kill -9 of the worker's process group would otherwise leave it running, writing into the workspace."""
    if _PRCTL is None:
        return
    _PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the worker died before the request took effect
        os._exit(1)


def _execute(command: list[str], environment: dict[str, str], invocation: Invocation, isolation: str, *,
             cwd: Path, cgroup: guard.Cgroup | None, pass_fds: tuple[int, ...] = ()) -> InvocationResult:
    limits = invocation.limits
    started = time.monotonic()
    watch = guard.StepGuard(limits, invocation.output_dir, cgroup)
    process = subprocess.Popen(command, cwd=cwd, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True, preexec_fn=_limiter(limits, cgroup), pass_fds=pass_fds)
    kill = functools.partial(_kill_group, process.pid)  # the sandbox's processes die with it (--die-with-parent)
    watch.start(kill)
    timed_out = False
    try:
        stdout, stderr = process.communicate(timeout=limits.timeout_seconds)
    except subprocess.TimeoutExpired:
        timed_out = True
        kill()
        stdout, stderr = process.communicate()
    finally:
        exceeded = watch.finish()
    text_err = stderr.decode(errors="replace")[-OUTPUT_TAIL:]
    if timed_out:
        text_err += f"\nkilled after the {limits.timeout_seconds} s timeout"
    elif exceeded:
        text_err += f"\nkilled: {exceeded}"
    out_of_memory = ("MemoryError" in text_err or "Cannot allocate memory" in text_err
                     or exceeded == guard.memory_exceeded(limits))
    return InvocationResult(
        exit_code=process.returncode, stdout=stdout.decode(errors="replace")[-OUTPUT_TAIL:], stderr=text_err,
        seconds=round(time.monotonic() - started, 3), timed_out=timed_out, out_of_memory=out_of_memory,
        isolation=isolation, exceeded="" if timed_out else exceeded,
        peak_mb=round(watch.peak_bytes / guard.MIB) if watch.peak_bytes else None,
    )


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
