"""Warm starts of the local runtime's steps (``runtime.zygote``): forked into their sandbox with the scientific stack
already imported, holding nothing of the zygote but its imports, and started cold when the warm start fails."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from dagsmith import datasets
from dagsmith.runtime import sandbox, warm
from dagsmith.runtime.base import Invocation, Limits
from dagsmith.runtime.local import LocalRuntime
from dagsmith_kit import Bundle

#: Reports what it was started with: which heavy modules it found imported, its open descriptors, its privileges,
#: where its import path points, a draw from numpy's global random state, and how the contract's paths look.
PROBE = """
import json, os, sys
already = sorted(name for name in ("numpy", "pandas", "sklearn") if name in sys.modules)
import numpy
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
print(json.dumps({"already": already, "fds": sorted(int(fd) for fd in os.listdir("/proc/self/fd")),
                  "status": {key: status[key].split()[0] for key in ("CapEff", "CapPrm", "CapBnd", "NoNewPrivs",
                                                                    "Seccomp")},
                  "path": sys.path, "draw": int(numpy.random.randint(1 << 30)), "argv": sys.argv,
                  "main": __name__, "input": sorted(os.listdir("/input")), "uid": os.getuid()}))
sys.exit(int(os.environ.get("DAGSMITH_SERVICE") == "exits_three") * 3)
"""


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    return Bundle.create(tmp_path_factory.mktemp("warm") / "input", datasets.load("iris"), task_type="clustering")


def _warmed(runtime: LocalRuntime) -> LocalRuntime:
    """``runtime``, its process's zygote started and done importing."""
    zygote = runtime.prestart()
    assert zygote is not None and zygote.ready(timeout=120)
    return runtime


def _probe(runtime: LocalRuntime, bundle: Bundle, output, service: str = "probe"):
    result = runtime.run(Invocation(service, {"main.py": PROBE}, bundle.path, output, {},
                                    Limits(timeout_seconds=60, memory_mb=512)))
    return result, json.loads(result.stdout) if result.stdout else None


def test_a_warm_step_starts_with_its_imports_done_and_nothing_else_of_the_zygote(bundle, tmp_path):
    runtime = _warmed(LocalRuntime())
    first, seen = _probe(runtime, bundle, tmp_path / "one")
    assert first.ok, first.stderr
    assert seen["already"] == ["numpy", "pandas", "sklearn"]
    assert seen["fds"] == [0, 1, 2, 3]  # its standard streams, and the folder listing /proc/self/fd itself
    assert seen["status"] == {"CapEff": "0" * 16, "CapPrm": "0" * 16, "CapBnd": "0" * 16, "NoNewPrivs": "1",
                              "Seccomp": "2"}  # no capability, none to regain, the system-call filter on
    if os.geteuid() == 0:
        assert seen["uid"] in sandbox.UID_RANGE
    assert not any(path.startswith(str(warm.__file__).rsplit("/dagsmith/", 1)[0]) for path in seen["path"])
    assert seen["path"][0] == "/service" and seen["main"] == "__main__"
    assert seen["argv"] == ["/service/main.py", "--input", "/input", "--output", "/output", "--params",
                            "/params.json"]
    assert "bundle.json" in seen["input"]
    _, again = _probe(runtime, bundle, tmp_path / "two")
    assert again["draw"] != seen["draw"]  # numpy's global random state is not the zygote's, copied


def test_a_cold_step_imports_for_itself_and_sees_the_same_sandbox(bundle, tmp_path):
    warm_result, warm_seen = _probe(_warmed(LocalRuntime()), bundle, tmp_path / "warm")
    cold_result, cold_seen = _probe(LocalRuntime(warm=False), bundle, tmp_path / "cold")
    assert cold_result.ok and cold_seen["already"] == []
    for key in ("argv", "main", "input"):
        assert warm_seen[key] == cold_seen[key]
    assert warm_result.isolation == cold_result.isolation == "bubblewrap sandbox"


def test_a_warm_steps_exit_code_is_its_own(bundle, tmp_path):
    result, _ = _probe(_warmed(LocalRuntime()), bundle, tmp_path / "out", service="exits_three")
    assert result.exit_code == 3


def test_a_dead_zygote_is_replaced_and_steps_do_not_wait_for_its_imports(bundle, tmp_path):
    runtime = _warmed(LocalRuntime())
    before = warm._zygote
    before.process.kill()
    before.process.wait()
    result, seen = _probe(runtime, bundle, tmp_path / "meanwhile")  # starts another, and goes on without it
    assert result.ok and seen["already"] == []
    assert warm._zygote is not before and warm._zygote.alive
    assert not os.path.exists(before.home), "the dead zygote's home is removed"
    result, seen = _probe(_warmed(runtime), bundle, tmp_path / "after")
    assert result.ok and seen["already"] == ["numpy", "pandas", "sklearn"]


def test_a_warm_step_joins_its_sandbox_only_once_bubblewrap_has_built_it(bundle, tmp_path, monkeypatch):
    """bwrap names the sandbox's pid before it mounts anything: a service joining then would see the host's files."""
    roots = []

    def built(info, placeholder):
        pid = built_sandbox(info, placeholder)
        roots.append(sorted(os.listdir(f"/proc/{pid}/root")))
        return pid

    built_sandbox = warm.built_sandbox
    monkeypatch.setattr(warm, "built_sandbox", built)
    runtime = _warmed(LocalRuntime())
    for name in ("one", "two", "three"):
        result, seen = _probe(runtime, bundle, tmp_path / name)
        assert result.ok and seen["already"] == ["numpy", "pandas", "sklearn"]
    assert len(roots) == 3
    for root in roots:
        assert {"input", "output", "service", "tmp"} <= set(root) and "home" not in root, root


def test_a_warm_start_that_fails_starts_the_step_cold(bundle, tmp_path, monkeypatch):
    def refused(info, built):
        raise LookupError("bubblewrap did not start the sandbox")

    monkeypatch.setattr(warm, "built_sandbox", refused)
    runtime = _warmed(LocalRuntime())
    before = set(os.listdir("/proc/self/fd"))
    result, seen = _probe(runtime, bundle, tmp_path / "out")
    assert result.ok and seen["already"] == []
    assert set(os.listdir("/proc/self/fd")) <= before, "the failed warm start's pipes are closed"


def _fork(work) -> tuple[int, int]:
    """Start ``work()`` in a process forked from this one, as an Airflow worker forks a task: its pid, and the pipe
    its JSON result comes through."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            os.write(write, json.dumps(work()).encode())
        finally:
            os._exit(0)
    os.close(write)
    return pid, read


def _outcome(child: tuple[int, int]):
    pid, read = child
    with os.fdopen(read, "rb") as pipe:
        text = pipe.read()
    os.waitpid(pid, 0)
    assert text, "the forked process failed before it reported"
    return json.loads(text)


def test_processes_forked_from_the_starter_share_its_zygote(bundle, tmp_path):
    runtime = _warmed(LocalRuntime())
    starter = warm._zygote

    def step(name: str):
        def work():
            result, seen = _probe(runtime, bundle, tmp_path / name)
            return {"ok": result.ok, "already": seen["already"], "same": warm._zygote is starter}
        return work

    children = [_fork(step(name)) for name in ("one", "two", "three")]  # at once, each on its own connection
    for child in children:
        assert _outcome(child) == {"ok": True, "already": ["numpy", "pandas", "sklearn"], "same": True}
    result, seen = _probe(runtime, bundle, tmp_path / "starter")
    assert result.ok and seen["already"] == ["numpy", "pandas", "sklearn"]


def test_a_forked_process_whose_zygote_died_starts_its_steps_cold_and_starts_none(bundle, tmp_path, monkeypatch):
    from dagsmith.runtime.local import _zygote_environment

    dead = warm.Zygote(_zygote_environment())
    assert dead.ready(timeout=120)
    dead.process.kill()
    dead.process.wait()
    monkeypatch.setattr(warm, "_zygote", dead)
    runtime = LocalRuntime()

    def work():
        result, seen = _probe(runtime, bundle, tmp_path / "out")
        return {"ok": result.ok, "already": seen["already"], "same": warm._zygote is dead, "ready": dead.ready()}

    assert _outcome(_fork(work)) == {"ok": True, "already": [], "same": True, "ready": False}
    assert os.path.exists(dead.home), "only the process that started a zygote removes its home"
    shutil.rmtree(dead.home)
