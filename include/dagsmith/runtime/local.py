"""The local runtime: each microservice as a subprocess of the worker, inside a bubblewrap sandbox.

The sandbox (``runtime.sandbox``) is what contains untrusted code on a machine without a container engine;
around it each run gets a memory limit for all its processes and its ``/tmp`` together (a cgroup of its own
where the host allows one, see ``runtime.guard``) besides each process's address space, a CPU-time limit, a
process limit, caps on its output (a watcher kills it past the total size or file count, RLIMIT_FSIZE stops a
file at its size), a timeout that kills it whole, and captured output. A run killed at a limit says which in
its result (``exceeded``) and its stderr. Services run on this interpreter, whose packages are the runtime's
pinned set (``runtime.packages``): a service pinning anything else fails with the names, and nothing is ever
installed. Each starts warm: forked into its sandbox from a process that imported the scientific stack once
(``runtime.zygote``), or cold, in a fresh interpreter, where that is off (``DAGSMITH_COLD_STEPS=1``) or fails.

``DAGSMITH_UNSAFE_NO_SANDBOX=1`` runs services as plain subprocesses, for trusted catalogs on machines
without bubblewrap; every try then says so in its log and the run's trace.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dagsmith.runtime import guard, sandbox, seccomp, warm
from dagsmith.runtime.base import (HostPaths, Invocation, InvocationResult, Limits, contract_command,
                                   prepare_data_dirs, stage)
from dagsmith.runtime.zygote import FAILED, Request
from dagsmith.runtime.packages import not_provided, unavailable
from dagsmith.scratch import scratch_folder

KIT_PATH = Path(__file__).resolve().parents[2]  # the folder holding the dagsmith_kit package
OUTPUT_TAIL = 64 * 1024
logger = logging.getLogger(__name__)
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent dies
#: Looked up before any fork: loading a library in a forked child of a threaded worker could deadlock.
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl if sys.platform == "linux" else None
SANDBOXED = "bubblewrap sandbox"
UNSANDBOXED = f"NO SANDBOX ({sandbox.UNSANDBOXED_VARIABLE} is set: for trusted catalogs only)"


class LocalRuntime:
    name = "local"

    def __init__(self, *, sandboxed: bool = True, warm: bool = True):
        self.sandboxed, self.warm = sandboxed, warm

    @property
    def isolated(self) -> bool:
        return self.sandboxed

    @property
    def isolation(self) -> str:
        return SANDBOXED if self.sandboxed else UNSANDBOXED

    def prestart(self) -> warm.Zygote | None:
        """Start this process's zygote, when steps here start warm: a process that runs many steps calls it ahead
        of the first, so the zygote's imports overlap whatever comes before. Without it steps start cold."""
        if self.sandboxed and self.warm and seccomp.supported():
            return warm.zygote(_zygote_environment, start=True)
        return None

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
            environment = _environment(Path("/tmp"), invocation.service, Path(sandbox.KIT_DIR))
            try:
                # A warm start needs the filter: the forked service installs the very one bwrap would.
                zygote = warm.zygote(_zygote_environment) if self.warm else None
                if fd is not None and zygote and zygote.ready() and (result := _execute_warm(
                        zygote, invocation, host, uid, fd, environment, cwd=scratch_dir, cgroup=cgroup)):
                    return result
                if fd is not None:
                    os.lseek(fd, 0, os.SEEK_SET)  # a failed warm start's bwrap read the filter already
                command = sandbox.command(invocation, host, uid, contract_command(sys.executable), seccomp=fd,
                                          bounded=cgroup is not None)
                return _execute(command, environment, invocation, self.isolation, cwd=scratch_dir, cgroup=cgroup,
                                pass_fds=() if fd is None else (fd,))
            finally:
                if fd is not None:
                    os.close(fd)
                if uid is not None:
                    _take_back(invocation.output_dir)


def _take_back(output: Path) -> None:
    """Give the worker back what the run's uid wrote (links are not followed: the service made them). The pipeline
    may replace a file there meanwhile (a model search's rivals, handed over as the try ends): what is gone by the
    time it is reached has no owner to change."""
    os.chown(output, os.geteuid(), os.getegid(), follow_symlinks=False)
    for folder, folders, files in os.walk(output):  # a folder gone meanwhile is skipped, a link never followed
        for name in folders + files:
            with contextlib.suppress(FileNotFoundError):
                os.chown(os.path.join(folder, name), os.geteuid(), os.getegid(), follow_symlinks=False)


def _environment(home: Path, service: str, kit: Path) -> dict[str, str]:
    """Only what Python needs: nothing of the caller's environment (API keys, database URLs) leaks in."""
    return {"DAGSMITH_SERVICE": service, "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(home), "LANG": "C.UTF-8", "PYTHONPATH": str(kit), "PYTHONDONTWRITEBYTECODE": "1",
            "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg",
            "MPLCONFIGDIR": str(home / ".matplotlib")}


def _zygote_environment() -> dict[str, str]:
    """The services' environment for the zygote (``runtime.zygote``), on the host: its own private home, and the
    folder holding dagsmith and dagsmith_kit on its path."""
    return {**_environment(Path(tempfile.mkdtemp(prefix="dagsmith-zygote-")), "zygote", KIT_PATH),
            "JE_ARROW_MALLOC_CONF": "background_thread:false"}


def _limiter(limits: Limits, cgroup: guard.Cgroup | None):
    parent = os.getpid()

    def apply() -> None:
        _die_with(parent)
        if cgroup is not None:  # before exec: everything the step starts is born inside it
            cgroup.join()
        guard.set_limits(limits.memory_mb * guard.MIB, _cpu_seconds(limits), limits.file_mb * guard.MIB)
    return apply


def _cpu_seconds(limits: Limits) -> int:
    return max(1, int(limits.timeout_seconds * max(limits.cpus, 1)))


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
        watch.finish()
    return _result(process.returncode, stdout, stderr, started, invocation, isolation, watch, timed_out)


def _execute_warm(zygote: warm.Zygote, invocation: Invocation, host: HostPaths, uid: int | None, seccomp_fd: int,
                  environment: dict[str, str], *, cwd: Path, cgroup: guard.Cgroup | None) -> InvocationResult | None:
    """Run the service forked from ``zygote`` into a sandbox built as for a cold start; None when the warm start
    itself failed before any of the service's code ran (the caller then starts it cold)."""
    limits, bounded = invocation.limits, cgroup is not None
    started = time.monotonic()
    (info_read, info_write), (built_read, built_write) = os.pipe(), os.pipe()
    command = sandbox.command(invocation, host, uid, warm.PLACEHOLDER, seccomp=seccomp_fd, bounded=bounded,
                              info=info_write)
    shell = subprocess.Popen(command, cwd=cwd, env=environment, stdin=subprocess.DEVNULL, stdout=built_write,
                             stderr=subprocess.DEVNULL, start_new_session=True, preexec_fn=_limiter(limits, cgroup),
                             pass_fds=(seccomp_fd, info_write))
    os.close(info_write)
    os.close(built_write)
    kill = functools.partial(_kill_group, shell.pid)  # the sandbox, and the service inside it, die with it
    pipes = [os.pipe() for _ in range(3)]  # stdout, stderr, exit status
    try:
        with os.fdopen(info_read, "rb") as info, os.fdopen(built_read, "rb") as built:
            sandbox_pid = warm.built_sandbox(info, built)
        request = Request(sandbox_pid, uid, user_namespace=os.geteuid() != 0,
                          cgroup_procs=str(cgroup.path / "cgroup.procs") if cgroup else None,
                          memory_bytes=limits.memory_mb * guard.MIB, cpu_seconds=_cpu_seconds(limits),
                          file_bytes=limits.file_mb * guard.MIB, processes=guard.process_cap(limits, bounded),
                          environment=environment, argv=contract_command(sys.executable))
        zygote.fork(request, *(write for _, write in pipes))
    except (warm.ZygoteUnavailable, LookupError) as exc:
        logger.warning("step %s starts cold: %s", invocation.service, exc)
        kill()
        shell.wait()
        for read, _ in pipes:
            os.close(read)
        return None
    finally:
        for _, write in pipes:
            os.close(write)
    watch = guard.StepGuard(limits, invocation.output_dir, cgroup)
    watch.start(kill)
    try:
        (out, _), (err, _), (status_pipe, _) = pipes
        stdout, stderr, status, timed_out = warm.collect(out, err, status_pipe, limits.timeout_seconds, kill)
    finally:
        kill()  # whatever the service left running ends with its sandbox
        shell.wait()
        watch.finish()
    if status.startswith(FAILED) and not timed_out:
        logger.warning("step %s starts cold: %s", invocation.service, status)
        return None
    code = int(status) if status.lstrip("-").isdigit() else -signal.SIGKILL
    return _result(code, stdout, stderr, started, invocation, SANDBOXED, watch, timed_out)


def _result(exit_code: int, stdout: bytes, stderr: bytes, started: float, invocation: Invocation, isolation: str,
            watch: guard.StepGuard, timed_out: bool) -> InvocationResult:
    limits, exceeded = invocation.limits, watch.exceeded
    text_err = stderr.decode(errors="replace")[-OUTPUT_TAIL:]
    if timed_out:
        text_err += f"\nkilled after the {limits.timeout_seconds} s timeout"
    elif exceeded:
        text_err += f"\nkilled: {exceeded}"
    out_of_memory = ("MemoryError" in text_err or "Cannot allocate memory" in text_err
                     or exceeded == guard.memory_exceeded(limits))
    return InvocationResult(
        exit_code=exit_code, stdout=stdout.decode(errors="replace")[-OUTPUT_TAIL:], stderr=text_err,
        seconds=round(time.monotonic() - started, 3), timed_out=timed_out, out_of_memory=out_of_memory,
        isolation=isolation, exceeded="" if timed_out else exceeded,
        peak_mb=round(watch.peak_bytes / guard.MIB) if watch.peak_bytes else None,
    )


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
