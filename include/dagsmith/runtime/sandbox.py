"""bubblewrap, the sandbox every microservice run on the host goes through.

Catalog services are untrusted code and static scanning is only a first filter, so the local runtime contains
them with the kernel's namespaces rather than with checks of its own. Each run gets new pid, network, ipc and
uts namespaces and a fresh ``/proc`` (no host process, so no ``/proc/<parent>/environ``), no network, and a root
filesystem holding only ``/usr``, the interpreter's folders, dagsmith_kit, the service and its params and the
input bundle, all read-only, the output folder writable and a private size-limited tmpfs at ``/tmp`` and
``/dev/shm``. No home, no ``DAGSMITH_HOME``, no Airflow folders, none of the caller's environment. The service
sees the same paths as in a container (``/service``, ``/params.json``, ``/input``, ``/output``).

The kernel interfaces behind the namespaces stay out of reach: a seccomp filter (``runtime.seccomp``) refuses
new namespaces, mounts, ptrace, modules, keyrings, BPF and the like. Where a cgroup holds the step's memory in
all (``runtime.guard``) each tmpfs may take the whole budget, since their pages count in it; elsewhere they share
it and the process limit shrinks with the memory limit.

A worker running as root would run the service as root without capabilities, which the kernel exempts from the
process limit, so the service drops to an unprivileged uid of its own (``setpriv``) and the process limit
(``prlimit``) holds; the uid is drawn per run so that concurrent runs do not share one process budget. A worker
running as another user gets the same through an unprivileged user namespace.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import secrets
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path, PurePath, PurePosixPath

from dagsmith.runtime import guard
from dagsmith.runtime.base import (INPUT_DIR, OUTPUT_DIR, PARAMS_FILE, SERVICE_DIR, HostPaths, Invocation,
                                   RuntimeUnavailable)

#: Where dagsmith_kit appears inside the sandbox (on PYTHONPATH); the contract's own paths are ``runtime.base``'s.
KIT_DIR = "/opt/dagsmith"


def _kit_package() -> Path:
    """dagsmith_kit's folder, found without importing it (that would load pandas)."""
    spec = importlib.util.find_spec("dagsmith_kit")
    if spec is None or spec.origin is None:
        raise ImportError("dagsmith_kit is not installed beside dagsmith")
    return Path(spec.origin).resolve().parent


_KIT_PACKAGE = _kit_package()
#: Run uids for a root worker: far above people's and rootless containers' ranges, one drawn per run.
UID_RANGE = range(3_000_000, 3_500_000)
#: The opt-out, named so nobody sets it by accident: services then run as plain subprocesses of the worker.
UNSANDBOXED_VARIABLE = "DAGSMITH_UNSAFE_NO_SANDBOX"
INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), or "
                f"run steps in containers (DAGSMITH_RUNTIME=docker); {UNSANDBOXED_VARIABLE}=1 runs services without "
                "any sandbox and is for trusted catalogs only")
#: The service's private writable folders (tmpfs).
SCRATCH = ("/tmp", "/dev/shm")
_TOOLS = ("bwrap", "setpriv", "prlimit")
#: Looks for a dead worker's sandboxes at most (each after killing what the one before found).
KILL_ROUNDS = 3
_LIBRARY_CONFIG = ("/etc/ld.so.cache", "/etc/localtime", "/etc/fonts")  # for the loader, time zones and plots


@functools.cache
def check() -> None:
    """Raise ``RuntimeUnavailable`` saying how to fix it unless bubblewrap and its helpers can build a sandbox here
    (installed, and the kernel allows the namespaces); asked once per process."""
    missing = [tool for tool in _TOOLS if shutil.which(tool) is None]
    if missing:
        raise RuntimeUnavailable(f"the local runtime runs every microservice in a bubblewrap sandbox, and "
                                 f"{', '.join(missing)} is not installed; {INSTALL_HINT}")
    probe = subprocess.run([*_namespaces(), "--ro-bind", "/usr", "/usr", *_merged_usr(), "true"],
                           capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        raise RuntimeUnavailable(f"bubblewrap cannot build a sandbox on this machine ({probe.stderr.strip()}); "
                                 f"unprivileged user namespaces may be disabled; {INSTALL_HINT}")


def run_uid() -> int | None:
    """The uid a run's service gets: a fresh unprivileged one under a root worker, else the worker's own."""
    return UID_RANGE[secrets.randbelow(len(UID_RANGE))] if os.geteuid() == 0 else None


def command(invocation: Invocation, host: HostPaths, uid: int | None, argv: list[str], *, seccomp: int | None,
            bounded: bool, info: int | None = None) -> list[str]:
    """The bwrap command line that runs ``argv`` (paths as seen inside) for ``invocation``, whose code and params
    are staged at ``host``, under its limits: ``seccomp`` is the file descriptor bwrap reads the system-call
    filter from, ``bounded`` whether a cgroup holds the step's memory in all (``runtime.guard``), ``info`` a
    descriptor bwrap writes the sandbox's pid and namespaces to (a warm start joins them, ``runtime.zygote``)."""
    limits = invocation.limits
    interpreter = dict.fromkeys(Path(prefix) for prefix in (sys.base_prefix, sys.prefix))
    binds = [(folder, str(folder), "--ro-bind") for folder in interpreter if not _under_usr(folder)]
    binds += [(_KIT_PACKAGE, f"{KIT_DIR}/dagsmith_kit", "--ro-bind"),
              (host.service_dir, SERVICE_DIR, "--ro-bind"), (host.params_file, PARAMS_FILE, "--ro-bind"),
              (invocation.input_dir, INPUT_DIR, "--ro-bind"), (invocation.output_dir, OUTPUT_DIR, "--bind")]
    args = [*_namespaces(), "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr", *_merged_usr()]
    for config in _LIBRARY_CONFIG:
        args += ["--ro-bind-try", config, config]
    args += ["--proc", "/proc", "--dev", "/dev"]
    for scratch, size in zip(SCRATCH, guard.scratch_sizes(limits, bounded)):  # world-writable like a host's
        args += ["--perms", "1777", "--size", str(size), "--tmpfs", scratch]
    # Binds come after the scratch mounts, so an interpreter living under /tmp is mounted on top of them, not
    # hidden; bwrap would create a bind's missing parents with the host parent's mode (0700 for /root).
    for parent in _parents(inside for _, inside, _ in binds):
        args += ["--perms", "0755", "--dir", parent]
    for source, inside, how in binds:
        args += [how, str(source.resolve()), inside]
    args += ["--chdir", "/tmp"]
    if seccomp is not None:
        args += ["--seccomp", str(seccomp)]
    if info is not None:
        args += ["--info-fd", str(info)]
    if uid is not None:  # a root worker: the service gets only what setpriv needs to become ``uid``, then nothing
        args += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--",
                 "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs"]
    return [*args, "--", "prlimit", f"--nproc={guard.process_cap(limits, bounded)}", "--", *argv]


def _namespaces() -> list[str]:
    # As root no user namespace (its root would map to the host's, exempt from the process limit); otherwise
    # the user namespace is what lets an unprivileged bwrap build the others.
    user = [] if os.geteuid() == 0 else ["--unshare-user"]
    return ["bwrap", *user, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try"]


def _merged_usr() -> list[str]:
    """The usual top-level links into ``/usr`` (every current distribution merges them)."""
    links = []
    for name in ("bin", "lib", "lib64", "sbin"):
        target = Path("/", name)
        if target.is_symlink():
            links += ["--symlink", os.readlink(target), f"/{name}"]
    return links


def _under_usr(path: PurePath) -> bool:
    return path == PurePosixPath("/usr") or path.is_relative_to("/usr")


def _parents(paths) -> list[str]:
    """Every folder above ``paths`` that bwrap must create, outermost first (``/usr`` is bound as a whole, the
    scratch folders are mounted already)."""
    made = {PurePosixPath(folder) for folder in ("/", "/dev", *SCRATCH)}
    parents = {parent for path in paths for parent in PurePosixPath(path).parents
               if parent not in made and not _under_usr(parent)}
    return sorted(map(str, parents), key=lambda p: (p.count("/"), p))


def kill_writing_to(outputs: list[Path]) -> int:
    """Kill this machine's sandboxes whose writable folder is one of ``outputs`` (the tries of a worker that died):
    a worker killed while bwrap sets a sandbox up can leave its inner half waiting for ever, out of reach of
    ``--die-with-parent``. Looked for again after each round of kills, as an outer half may have forked its inner one
    between the look and the kill. Returns how many processes were killed."""
    wanted = {f"--bind\0{folder.resolve()}\0{OUTPUT_DIR}\0".encode() for folder in outputs}
    killed: set[int] = set()  # a process killed but not yet gone is neither killed nor counted again
    for _ in range(KILL_ROUNDS):
        found = [pid for pid, command in _commands() if pid not in killed and command.startswith(b"bwrap\0")
                 and any(bind in command for bind in wanted)]
        for pid in found:
            with contextlib.suppress(OSError):  # ended meanwhile, or not ours to kill
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
        if not found:
            break
    return len(killed)


def _commands() -> Iterator[tuple[int, bytes]]:
    """Every process's pid and raw command line (those that end while being read are left out)."""
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            yield int(entry.name), (entry / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue
