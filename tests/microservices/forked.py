"""Run shipped microservices' ``main.py`` in processes forked from a server that imported their libraries once.

A service process spends most of its life importing pandas, scikit-learn, LightGBM and matplotlib (about 1.5 s)
and very little on a table of sixty rows. The contract suite runs every service several times and the service
tests run hundreds more, so a server process per test process (``python -m tests.microservices.forked``) imports
what the catalog's services import, once, and forks each run from itself: each run is still a process of its own
running ``main.py`` as ``__main__`` with the contract's command line; its exit code and stderr are what the
executor would read, and nothing it does reaches the test process or the server.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from dagsmith.runtime.zygote import run_main

CATALOG = Path(__file__).resolve().parents[2] / "microservices"
#: One thread per run (the machine is shared with other tests) and no display.
SERVER_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
#: A run still going after this many seconds is killed (SIGALRM: exit code -14), so a hang fails one test.
TIMEOUT_SECONDS = 300


def imported_modules(catalog: Path = CATALOG) -> list[str]:
    """Every module the catalog's ``main.py`` files import at their top level."""
    names: set[str] = set()
    for main in catalog.glob("*/main.py"):
        for node in ast.parse(main.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module)
    return sorted(names - {"__future__"})


@dataclass(frozen=True)
class Outcome:
    """One run's exit code and stderr, as the executor reads them."""

    exit_code: int
    stderr: str


def _child(script: str, argv: list[str], workdir: str, stderr_file: str) -> int:
    """In the forked child: run ``script`` as ``__main__`` as the interpreter would (``runtime.zygote.run_main``,
    which warm steps run by); returns its exit code."""
    signal.alarm(TIMEOUT_SECONDS)
    fd = os.open(stderr_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 2)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)
    sys.stdout = os.fdopen(1, "w", closefd=False)
    os.chdir(workdir)
    return run_main([sys.executable, script, *argv])


def serve() -> None:
    """The server: import the services' modules, then fork one child per request line (JSON) on stdin and answer
    each with the child's exit code on stdout."""
    for name in imported_modules():
        with contextlib.suppress(ImportError):  # the service's own run reports it
            importlib.import_module(name)
    answers = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = _child(request["script"], request["argv"], request["workdir"], request["stderr"])
            finally:
                sys.stderr.flush()
                sys.stdout.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        answers.write(f"{os.waitstatus_to_exitcode(status)}\n")
        answers.flush()


class ForkedServices:
    """A client of the server above: one run at a time (see the module's docstring)."""

    def __init__(self, catalog: Path = CATALOG):
        self.catalog = catalog
        root = Path(__file__).resolve().parents[2]
        self.server = subprocess.Popen(
            [sys.executable, "-m", "tests.microservices.forked"], cwd=root, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**os.environ, **SERVER_ENV},
        )

    def run(self, service: str, argv: list[str], workdir: Path) -> Outcome:
        """Run ``microservices/<service>/main.py ARGV`` in ``workdir``."""
        stderr_file = workdir.parent / f"{workdir.name}.stderr"
        request = {"script": str(self.catalog / service / "main.py"), "argv": argv, "workdir": str(workdir),
                   "stderr": str(stderr_file)}
        self.server.stdin.write(json.dumps(request) + "\n")
        self.server.stdin.flush()
        code = int(self.server.stdout.readline())
        return Outcome(code, stderr_file.read_text(encoding="utf-8"))

    def close(self) -> None:
        self.server.stdin.close()
        self.server.wait(timeout=30)


if __name__ == "__main__":
    serve()
