"""Warm starts for the local sandbox: a process that imported the runtime's scientific stack once, and forks each
step's service into that step's own bubblewrap sandbox.

A cold step spends most of its time importing: numpy, pandas and scikit-learn take 1.5 to 3 s of CPU before a step
of 400 rows does 0.3 s of work, and a pipeline has ten steps. Forking a process that holds them imported costs
milliseconds. The sandbox stays bubblewrap's: the worker starts it exactly as for a cold step, with a placeholder
in place of the service (``runtime.warm``), and the forked process joins its namespaces (``setns``), drops to the
run's uid with no capabilities, takes the same seccomp filter and only then runs the service's code.

This process is started by the worker with the services' clean environment (``local._environment``, Arrow's
allocator without its background thread: a process forks safely only with one thread) and holds
nothing but imported libraries: whatever a forked service can read of its memory is that. It takes requests from
its worker and from the processes forked from that worker (an Airflow worker's tasks), each over a connection of
its own that it received on a socket only they hold (the hub); every forked service closes those sockets, with
every other descriptor, before its code runs.

Run as ``python -m dagsmith.runtime.zygote FD`` (FD: the hub).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import importlib
import json
import os
import resource
import runpy
import selectors
import shutil
import signal
import socket
import sys
import traceback
from dataclasses import asdict, dataclass, field

from dagsmith.runtime import guard, seccomp

#: What a service is forked with already imported: what the shipped catalog's services import most, and what
#: dagsmith_kit imports. Anything else a service imports it imports itself, as in a cold start.
PRELOADED = ("numpy", "pandas", "pyarrow", "pyarrow.parquet", "scipy.stats", "sklearn.base", "sklearn.metrics",
             "sklearn.preprocessing", "sklearn.pipeline", "sklearn.impute", "sklearn.compose", "sklearn.ensemble",
             "sklearn.linear_model", "sklearn.model_selection", "sklearn.inspection", "sklearn.tree",
             "sklearn.cluster", "sklearn.decomposition", "lightgbm", "matplotlib", "matplotlib.pyplot")
#: The namespaces a service joins besides user namespaces, the mount namespace last (joining it moves the root into
#: the sandbox).
NAMESPACES = ("ipc", "uts", "net", "cgroup", "pid", "mnt")
_NS_GET_USERNS = 0xB701  # ioctl(2) on a namespace: the user namespace that owns it
#: The largest message a request takes; requests are a few hundred bytes.
MESSAGE_BYTES = 64 * 1024
#: What a process sends the hub, with its end of its connection, to connect.
CONNECT = b"connect"
#: Descriptors a request carries: the service's stdout and stderr, and where its exit status goes.
REQUEST_FDS = 3
#: What the zygote tells its worker on the hub once its imports are done, and a connection once it forked the
#: service that connection asked for.
READY, FORKED = b"ready", b"forked"
#: The first line the status pipe gets when the warm start itself failed (not the service): the worker then
#: starts the step cold.
FAILED = "no warm start"

_PR_SET_PDEATHSIG, _PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _PR_CAPBSET_DROP = 1, 38, 22, 24
_SECCOMP_MODE_FILTER = 2
_CAPABILITY_VERSION_3 = 0x20080522
_LAST_CAPABILITY = 63
_libc = ctypes.CDLL(None, use_errno=True)


@dataclass(frozen=True)
class Request:
    """One service to start: the host pid of its sandbox's init (whose namespaces it joins), the uid it runs as
    (None: it keeps its user namespace's, the worker's own), the cgroup holding the step's memory, its limits,
    environment and command line (as seen inside the sandbox)."""

    sandbox_pid: int
    uid: int | None
    user_namespace: bool
    cgroup_procs: str | None
    memory_bytes: int
    cpu_seconds: int
    file_bytes: int
    processes: int
    environment: dict[str, str] = field(default_factory=dict)
    argv: list[str] = field(default_factory=list)

    def encode(self) -> bytes:
        return json.dumps(asdict(self)).encode()

    @classmethod
    def decode(cls, message: bytes) -> Request:
        return cls(**json.loads(message))


def preload() -> None:
    """Import ``PRELOADED`` and every module of dagsmith_kit; a module that fails to import is left to the service
    (its own import then fails as it would cold)."""
    import pkgutil

    import dagsmith_kit

    names = [*PRELOADED, *(f"dagsmith_kit.{module.name}" for module in pkgutil.iter_modules(dagsmith_kit.__path__))]
    for name in names:
        with contextlib.suppress(Exception):
            importlib.import_module(name)


def serve(hub: socket.socket) -> None:
    """Fork a service for each request, on any connection, until every process holding the hub has closed it.

    The hub only brings connections: each process that asks for services (the worker, and any process forked from
    it) sends the zygote one end of a socket pair of its own, once, and its requests and their answers go over that
    pair. An answer therefore reaches the process that asked, whichever of them shares the hub."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the forked processes
    with selectors.DefaultSelector() as selector:
        selector.register(hub, selectors.EVENT_READ)
        while True:
            for key, _ in selector.select():
                connection: socket.socket = key.fileobj  # type: ignore[assignment]
                message, fds, _, _ = socket.recv_fds(connection, MESSAGE_BYTES, REQUEST_FDS)
                if connection is hub:
                    if not message:
                        return
                    for fd in fds:  # CONNECT: a process's own connection
                        selector.register(socket.socket(fileno=fd), selectors.EVENT_READ)
                elif not message:
                    selector.unregister(connection)
                    connection.close()
                else:
                    _fork(Request.decode(message), fds, connection, selector)


def _fork(request: Request, fds: list[int], connection: socket.socket, selector: selectors.BaseSelector) -> None:
    """Fork the service of ``request`` with ``fds`` (stdout, stderr, status) and tell ``connection`` it is forked."""
    sys.stdout.flush()
    sys.stderr.flush()
    if os.fork() == 0:
        for key in list(selector.get_map().values()):  # no forked process holds the zygote's connections
            key.fileobj.close()  # type: ignore[union-attr]
        selector.close()
        _start(request, fds)
    for fd in fds:
        os.close(fd)
    with contextlib.suppress(OSError):  # the asking process ended meanwhile
        connection.sendall(FORKED)


def _start(request: Request, fds: list[int]) -> None:
    """In the forked process, still trusted: join the sandbox, fork the service inside its pid namespace, wait for
    it and write its exit code, or why it could not start, to the status pipe. Never returns."""
    out, err, status = fds
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        _call(_libc.prctl, _PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        namespaces = _namespaces(request)
        if request.cgroup_procs:
            with open(request.cgroup_procs, "w") as procs:
                procs.write(str(os.getpid()))
        _limit(request)
        for name, fd in namespaces:
            _call(_libc.setns, fd, 0, what=f"joining the sandbox's {name} namespace")
            os.close(fd)
        os.chdir("/tmp")
        ready, started = os.pipe()
        service = os.fork()  # the first process born inside the sandbox's pid namespace
        if service == 0:
            os.close(ready)
            _run_service(request, out, err, started)
        for fd in (out, err, started):
            os.close(fd)
        began = os.read(ready, 1) == b"1"
        _, wait_status = os.waitpid(service, 0)
        code = os.waitstatus_to_exitcode(wait_status)
        message = str(code) if began else f"{FAILED}: the service's process could not drop its privileges ({code})"
    except BaseException as exc:  # noqa: BLE001 - whatever went wrong, the worker must hear it and start cold
        message = f"{FAILED}: {exc!r}"
    with contextlib.suppress(OSError):
        os.write(status, message.encode())
    os._exit(0)


def _namespaces(request: Request) -> list[tuple[str, int]]:
    """The sandbox's namespaces in the order they are joined. Under a user namespace, bubblewrap makes one that owns
    the others and runs the sandbox in a second one inside it: the owner is joined first (it grants the right to
    join the rest), the inner one last, as the service's own."""
    opened = [(name, os.open(f"/proc/{request.sandbox_pid}/ns/{name}", os.O_RDONLY)) for name in NAMESPACES]
    if not request.user_namespace:
        return opened
    owner = fcntl.ioctl(opened[0][1], _NS_GET_USERNS)
    inner = os.open(f"/proc/{request.sandbox_pid}/ns/user", os.O_RDONLY)
    if os.fstat(inner).st_ino == os.fstat(owner).st_ino:
        os.close(inner)
        return [("user", owner), *opened]
    return [("user", owner), *opened, ("inner user", inner)]


def _limit(request: Request) -> None:
    """The limits a cold step's process gets from its worker and ``prlimit`` (``local._limiter``). Where a cgroup
    holds the step's memory, the address space it inherited is not counted: those pages are the zygote's, shared,
    and the cgroup bounds what it adds. Without one the address space is the only bound, and stays whole."""
    memory = request.memory_bytes + (_address_space() if request.cgroup_procs else 0)
    guard.set_limits(memory, request.cpu_seconds, request.file_bytes)
    resource.setrlimit(resource.RLIMIT_NPROC, (request.processes, request.processes))


def _address_space() -> int:
    """This process's virtual memory size, in bytes."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def _run_service(request: Request, out: int, err: int, started: int) -> None:
    """Become the service: its output, its environment, no privilege, the seccomp filter, no descriptor but its
    standard streams, then its code. Tells ``started`` just before the code runs. Never returns."""
    try:
        _call(_libc.prctl, _PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(err, 2)
        os.environ.clear()
        os.environ.update(request.environment)
        _drop_privileges(request.uid)
        _call(_libc.prctl, _PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        _install_filter()
        _forget_the_host()
        os.write(started, b"1")
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # the zygote's socket above all
    except BaseException:  # noqa: BLE001 - nothing of the service ran: say why on its stderr
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(125)
    os._exit(run_main(request.argv))


def _drop_privileges(uid: int | None) -> None:
    """No capability left, in any namespace: the bounding set emptied, then (as root) the run's uid, or (inside the
    worker's user namespace) an empty capability set."""
    for capability in range(_LAST_CAPABILITY + 1):
        if _libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0 and ctypes.get_errno() != 22:  # EINVAL: none
            raise OSError(ctypes.get_errno(), f"cannot drop capability {capability}")
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        return
    header = (ctypes.c_uint32 * 2)(_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    _call(_libc.capset, header, data)


def _install_filter() -> None:
    program = seccomp.program()
    buffer = ctypes.create_string_buffer(program, len(program))

    class _Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    _call(_libc.prctl, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER,
          ctypes.byref(_Program(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))), 0, 0)


def _forget_the_host() -> None:
    """What a cold start would not share with other steps: numpy's global random state (``random`` reseeds itself
    after a fork), and the host's own folders on the import path."""
    if numpy := sys.modules.get("numpy"):
        numpy.random.seed()
    prefixes = tuple({sys.prefix, sys.base_prefix})
    kit = os.environ.get("PYTHONPATH", "")
    sys.path[:] = [path for path in sys.path if path.startswith(prefixes)]
    if kit:
        sys.path.insert(0, kit)


def run_main(argv: list[str]) -> int:
    """Run ``argv`` (``python script args``) as the interpreter would, its exit code as the interpreter's."""
    script = argv[1]
    sys.argv = argv[1:]
    sys.path.insert(0, os.path.dirname(script))
    try:
        runpy.run_path(script, run_name="__main__")
        code = 0
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except BaseException:  # noqa: BLE001 - the interpreter's own behaviour: the traceback, then 1
        traceback.print_exc()
        code = 1
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    return code


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _call(function, *args, what: str = "") -> None:
    if function(*args) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what or function.__name__}: {os.strerror(error)}")


def main(fd: str) -> None:
    hub = socket.socket(fileno=int(fd))
    try:
        preload()
        if _threads() != 1:  # a fork copies only the forking thread: another's locks would stay held in the copy
            sys.exit(f"the zygote has {_threads()} threads after its imports; steps start cold")
        hub.sendall(READY)
        serve(hub)
    finally:
        shutil.rmtree(os.environ["HOME"], ignore_errors=True)  # its private home (plotting's caches)


if __name__ == "__main__":
    main(sys.argv[1])
