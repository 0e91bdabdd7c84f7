"""What an untrusted service can reach, on both runtimes: the local runtime's bubblewrap sandbox and containers.

The hostile services in tests/data/hostile evade the upload scanners (paths and modules built at run time);
the runtime is what must hold. Secrets are planted where a worker really keeps them: its environment, the
home folder, DAGSMITH_HOME's ``airflow-serve/secrets.json`` and another run's workspace.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import struct
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from dagsmith import datasets
from dagsmith.healing.classify import Diagnosis, ErrorClass, diagnose
from dagsmith.runtime import guard, sandbox, seccomp
from dagsmith.runtime.base import Invocation, Limits, RuntimeUnavailable
from dagsmith.runtime.local import LocalRuntime
from dagsmith_kit import Bundle
from tests.processes import processes_naming
from tests.runtime.test_docker_runtime import HOSTILE, service_files
from tests.runtime.test_docker_runtime import runtime as container_runtime  # noqa: F401 (a fixture)
from tests.waiting import wait_until

LIMITS = Limits(timeout_seconds=60, memory_mb=512, cpus=1.0, max_processes=64)


@contextmanager
def planted_secrets(home: Path) -> Iterator[str]:
    """Plant a fresh canary where a worker keeps secrets: DAGSMITH_HOME's ``airflow-serve/secrets.json``, another
    run's workspace under ``home``, a file in the real home folder and the worker's environment; yields it."""
    canary = f"canary-{secrets.token_hex(6)}"
    (home / "airflow-serve").mkdir(parents=True, exist_ok=True)
    (home / "airflow-serve" / "secrets.json").write_text(json.dumps({"admin": canary}))
    other = home / "workspaces" / "pipeline-1-other-run" / "input"
    other.mkdir(parents=True, exist_ok=True)
    (other / "data.csv").write_text(f"customer,secret\n1,{canary}\n")
    in_home = Path.home() / f".dagsmith-test-secret-{secrets.token_hex(4)}"
    in_home.write_text(canary)
    os.environ["DAGSMITH_TEST_SECRET"] = canary
    try:
        yield canary
    finally:
        del os.environ["DAGSMITH_TEST_SECRET"]
        in_home.unlink()


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    root = tmp_path_factory.mktemp("dagsmith-home")
    with planted_secrets(root) as canary:
        yield root, canary


@pytest.fixture(params=["local", "local-cold", "docker"])
def engine(request):
    """Each runtime; the local one with its steps forked warm into the sandbox, and started cold."""
    if request.param == "docker":
        return request.getfixturevalue("container_runtime")
    runtime = LocalRuntime(warm=request.param == "local")
    zygote = runtime.prestart()
    assert zygote is None or zygote.ready(timeout=120)
    return runtime


def _run(engine, home: tuple[Path, str], service: str, tmp_path: Path, limits: Limits = LIMITS,
         params: dict | None = None):
    """Run a hostile service on a real bundle inside a run's workspace, as a pipeline step would."""
    workspace = home[0] / "workspaces" / f"pipeline-2-{tmp_path.name}"
    bundle = Bundle.create(workspace / "input", datasets.load("penguins"), target="species",
                           task_type="multiclass_classification")
    folder = HOSTILE / service
    invocation = Invocation(service, service_files(folder), bundle.path, workspace / "attempts" / "01-1",
                            params or {}, limits)
    return engine.run(invocation), workspace


def test_a_secret_hunter_finds_nothing(engine, home, tmp_path):
    result, _ = _run(engine, home, "secret_hunter", tmp_path)
    loot = json.loads(result.stdout)
    assert loot["files"]["/input/bundle.json"].startswith("{"), "the hunt did not run"  # it read what it may
    assert home[1] not in result.stdout + result.stderr
    assert not [path for path in loot["files"]
                if any(part in path for part in ("secrets.json", "other-run", "test-secret"))]
    assert "DAGSMITH_TEST_SECRET" not in json.dumps(loot["environments"])
    assert diagnose(result).error_class is ErrorClass.CONTRACT, result.stderr


def test_writes_outside_the_output_folder_land_nowhere(engine, home, tmp_path):
    result, workspace = _run(engine, home, "covert_writer", tmp_path)
    assert "wrote into" not in result.stdout
    assert diagnose(result).error_class is ErrorClass.ENVIRONMENT, result.stderr
    marker = "tampered.txt"
    assert not list(workspace.rglob(marker)) and not (Path("/") / marker).exists()
    assert not (Path.home() / marker).exists() and not list(home[0].rglob(marker))


def test_a_network_client_from_an_unbanned_module_is_cut_off(engine, home, tmp_path):
    result, _ = _run(engine, home, "covert_network_probe", tmp_path)
    assert "reached" not in result.stdout
    assert "Network is unreachable" in result.stderr
    assert diagnose(result).error_class is ErrorClass.ENVIRONMENT


def test_a_fork_bomb_is_stopped_by_the_process_limit(engine, home, tmp_path):
    limits = Limits(timeout_seconds=60, memory_mb=512, max_processes=32)
    result, _ = _run(engine, home, "fork_bomb", tmp_path, limits)
    assert result.exit_code != 0 and "forked 200" not in result.stdout
    assert "Resource temporarily unavailable" in result.stderr
    assert diagnose(result).error_class is ErrorClass.RESOURCE


def test_the_input_bundle_is_read_only(engine, home, tmp_path):
    result, workspace = _run(engine, home, "input_tamperer", tmp_path)
    assert "Read-only file system" in result.stderr
    assert not (workspace / "input" / "tampered.txt").exists()


#: Small totals, so a hostile service reaches them in a second: 400 MB of memory, 64 MB of output.
SMALL = Limits(timeout_seconds=60, memory_mb=400, max_processes=64, output_mb=64, output_files=200, file_mb=16)


@pytest.fixture
def memory_cgroups() -> Path:
    """Where this worker makes its steps' memory cgroups: as root on this machine kind, cgroup v1's memory
    controller; with a delegated cgroup v2 subtree, there. (The fallback without any is tested on its own.)"""
    parent = guard._parent()
    assert parent is not None, "this host lets the worker make no memory cgroup (run as root, or delegate one)"
    return parent[0]


def test_a_steps_processes_together_are_held_to_its_memory(home, tmp_path, memory_cgroups, monkeypatch):
    """Four interpreters of 150 MB each: every one under the 400 MB per-process limit, 600 MB together."""
    made: list[guard.Cgroup | None] = []  # this step's own: concurrent tests' steps make theirs beside it
    create = guard.Cgroup.create

    def record(cls, limits: Limits) -> guard.Cgroup | None:
        made.append(create(limits))
        return made[-1]

    monkeypatch.setattr(guard.Cgroup, "create", classmethod(record))
    result, _ = _run(LocalRuntime(), home, "memory_spreader", tmp_path, SMALL, {"processes": 4, "mb_each": 150})
    assert "held" not in result.stdout and not result.ok
    assert result.exceeded == "the step used more than its 400 MB of memory (all its processes and its /tmp together)"
    assert result.stderr.endswith(f"killed: {result.exceeded}") and result.out_of_memory
    assert diagnose(result) == Diagnosis(ErrorClass.RESOURCE, result.exceeded)
    assert len(made) == 1 and made[0] is not None and made[0].path.parent == memory_cgroups, made
    assert not made[0].path.exists(), "the step's cgroup was left behind"


def test_a_step_within_its_memory_reports_the_most_it_held(home, tmp_path, memory_cgroups):
    """Two interpreters of 100 MB each: the step's peak counts both, and stays under its 400 MB."""
    result, _ = _run(LocalRuntime(), home, "memory_spreader", tmp_path, SMALL, {"processes": 2, "mb_each": 100})
    assert result.ok and "held 200 MB" in result.stdout, result.stderr
    assert result.peak_mb is not None and 200 <= result.peak_mb <= 400, result.peak_mb


def test_files_in_tmp_and_dev_shm_count_towards_the_steps_memory(home, tmp_path, memory_cgroups):
    """Both are in memory: 300 MB in each is 600 MB, over the step's 400 MB although each fits its own size."""
    result, _ = _run(LocalRuntime(), home, "scratch_filler", tmp_path, SMALL, {"mb_each": 300})
    assert "filled" not in result.stdout and not result.ok
    assert result.exceeded == guard.memory_exceeded(SMALL)
    assert diagnose(result) == Diagnosis(ErrorClass.RESOURCE, result.exceeded)


def test_without_a_cgroup_tmp_and_dev_shm_share_the_memory_budget(home, tmp_path, monkeypatch):
    """A host that allows no cgroup: the scratch folders' sizes add up to the budget instead, and the process
    limit shrinks with the memory limit."""
    monkeypatch.setattr(guard, "_parent", lambda: None)
    result, _ = _run(LocalRuntime(), home, "scratch_filler", tmp_path, SMALL, {"mb_each": 300})
    assert "No space left on device" in result.stderr and diagnose(result).error_class is ErrorClass.RESOURCE
    assert guard.process_cap(SMALL, bounded=False) == 4 and guard.process_cap(SMALL, bounded=True) == 64


@pytest.mark.parametrize("params, exceeded", [
    ({"total_mb": 1024, "file_mb": 8}, "the step wrote more than 64 MB into its output"),
    ({"files": 100_000}, "the step wrote more than 200 files into its output"),
])
def test_a_flood_of_output_is_stopped_at_the_output_caps(engine, home, tmp_path, params, exceeded):
    result, workspace = _run(engine, home, "output_flood", tmp_path, SMALL, params)
    assert "wrote" not in result.stdout and not result.ok
    assert result.exceeded == exceeded and exceeded in result.stderr
    assert diagnose(result) == Diagnosis(ErrorClass.RESOURCE, exceeded)
    output = workspace / "attempts" / "01-1"
    written = sum(path.stat().st_size for path in output.rglob("*"))
    assert written < 1024 << 20 and len(list(output.iterdir())) < 100_000


def test_a_file_over_the_size_limit_is_stopped(engine, home, tmp_path):
    """Locally RLIMIT_FSIZE fails the write at the limit; a container's output is watched for it."""
    result, workspace = _run(engine, home, "output_flood", tmp_path, SMALL, {"total_mb": 1024, "file_mb": 1024})
    assert "wrote" not in result.stdout and diagnose(result).error_class is ErrorClass.RESOURCE
    written = (workspace / "attempts" / "01-1" / "flood-0.bin").stat().st_size
    if isinstance(engine, LocalRuntime):
        assert "File too large" in result.stderr and written == 16 << 20
    else:
        assert result.exceeded == "the step wrote a file larger than 16 MB into its output (flood-0.bin)"
        assert written < 1024 << 20


def test_a_service_can_make_no_namespace_of_its_own(engine, home, tmp_path):
    result, _ = _run(engine, home, "namespace_maker", tmp_path)
    seen = json.loads(result.stdout)
    assert "Operation not permitted" in seen["unshare_command"]
    refused = {"unshare": "EPERM", "setns": "EPERM", "clone_newuser": "EPERM", "ptrace": "EPERM"}
    assert {name: seen["names"][name] for name in refused} == refused
    assert seen.get("x32_getpid", 1) != 0, "a call in the x32 ABI went through"
    assert seen["thread"] == seen["subprocess"] == "ran"


def _filter_answer(machine: str, number: int, arg0: int = 0) -> str:
    """Run the sandbox's BPF program on one call, as the kernel would; returns ALLOW, KILL or the errno's name."""
    audit = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7, "i386": 0x40000003}[machine]
    data = struct.pack("=iIQ6Q", number, audit, 0, arg0, 0, 0, 0, 0, 0)
    program = seccomp.program()
    index, accumulator = 0, 0
    while True:
        code, jt, jf, k = struct.unpack_from("=HBBI", program, index * 8)
        index += 1
        if code == 0x20:  # load a word of the call's data
            accumulator = struct.unpack_from("=I", data, k)[0]
        elif code in (0x15, 0x35, 0x45):  # jump if equal, greater or equal, any bit set
            taken = {0x15: accumulator == k, 0x35: accumulator >= k, 0x45: bool(accumulator & k)}[code]
            index += jt if taken else jf
        else:
            assert code == 0x06, f"unexpected instruction {code:#x}"
            if k == 0x7FFF0000:
                return "ALLOW"
            return "KILL" if k == 0x80000000 else errno.errorcode[k & 0xFFFF]


@pytest.mark.parametrize("machine, calls", [
    ("x86_64", {"unshare": 272, "setns": 308, "mount": 165, "ptrace": 101, "bpf": 321, "keyctl": 250, "getpid": 39,
                "x32 getpid": 0x40000000 | 39, "clone3": 435}),
    ("aarch64", {"unshare": 97, "setns": 268, "mount": 40, "ptrace": 117, "bpf": 280, "keyctl": 219, "getpid": 172,
                 "clone3": 435}),
])
def test_the_system_call_filter_refuses_namespaces_on_both_architectures(machine, calls):
    """Both architectures' tables, checked by running the program (this machine runs only its own)."""
    answers = {name: _filter_answer(machine, number) for name, number in calls.items()}
    refused = {name: "EPERM" for name in calls if name not in ("getpid", "clone3")}
    assert answers == {**refused, "getpid": "ALLOW", "clone3": "ENOSYS"}
    clone = {"x86_64": 56, "aarch64": 220}[machine]
    assert _filter_answer(machine, clone, 0x01200011) == "ALLOW"  # fork's flags: CLONE_CHILD_SETTID|CLEARTID|SIGCHLD
    assert _filter_answer(machine, clone, 0x003D0F00) == "ALLOW"  # a thread's
    for flag in (0x10000000, 0x00020000, 0x20000000, 0x40000000):  # new user, mount, pid, network namespace
        assert _filter_answer(machine, clone, 0x01200011 | flag) == "EPERM"
    assert _filter_answer("i386", 20) == "KILL"  # a 32-bit compatibility call


def test_a_timeout_kills_every_process_the_service_started(tmp_path):
    """A grandchild in a session of its own survives a process-group kill; the sandbox's pid namespace does not."""
    marker = f"dagsmith-orphan-{secrets.token_hex(4)}"
    code = ("import os, subprocess, sys, time\n"
            f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', '{marker}'],"
            " start_new_session=True)\n"
            "time.sleep(600)\n")
    bundle = Bundle.create(tmp_path / "in", datasets.load("iris"), task_type="clustering")
    result = LocalRuntime().run(Invocation("orphan_maker", {"main.py": code}, bundle.path, tmp_path / "out", {},
                                           Limits(timeout_seconds=3, memory_mb=512)))
    assert result.timed_out
    assert not processes_naming(marker)


def test_services_run_as_an_unprivileged_uid_with_only_the_contract_environment(home, tmp_path):
    result, _ = _run(LocalRuntime(), home, "introspect", tmp_path)
    seen = json.loads(result.stdout)
    if os.geteuid() == 0:
        assert seen["uid"] in sandbox.UID_RANGE and seen["gid"] == seen["uid"]
    assert set(seen["environment"]) <= {"DAGSMITH_SERVICE", "PATH", "HOME", "LANG", "PYTHONPATH", "PWD",
                                        "PYTHONDONTWRITEBYTECODE", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                        "MKL_NUM_THREADS", "MPLBACKEND", "MPLCONFIGDIR"}
    assert result.isolation == "bubblewrap sandbox"


def test_without_bubblewrap_the_local_runtime_refuses_and_says_how_to_install_it(home, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on it
    sandbox.check.cache_clear()
    try:
        with pytest.raises(RuntimeUnavailable, match="apt-get install bubblewrap"):
            _run(LocalRuntime(), home, "introspect", tmp_path)
    finally:
        sandbox.check.cache_clear()


def test_running_without_the_sandbox_is_an_explicit_opt_in_and_says_so(home, tmp_path, monkeypatch):
    from dagsmith.cli.serve import isolation_line
    from dagsmith.config import ConfigurationError, Settings

    monkeypatch.setenv(sandbox.UNSANDBOXED_VARIABLE, "1")
    settings = Settings.from_env()
    assert not settings.sandboxed
    result, _ = _run(LocalRuntime(sandboxed=settings.sandboxed), home, "introspect", tmp_path)
    assert result.isolation.startswith("NO SANDBOX") and sandbox.UNSANDBOXED_VARIABLE in result.isolation
    assert "[bold red]local, NO SANDBOX" in isolation_line("local", settings)
    monkeypatch.delenv(sandbox.UNSANDBOXED_VARIABLE)
    assert isolation_line("local", Settings.from_env()) == "[green]local, bubblewrap sandbox[/]"
    monkeypatch.setenv(sandbox.UNSANDBOXED_VARIABLE, "maybe")
    with pytest.raises(ConfigurationError, match=sandbox.UNSANDBOXED_VARIABLE):
        Settings.from_env()


def test_pins_the_runtime_lacks_are_an_environment_error_and_nothing_is_installed(home, tmp_path):
    folder = tmp_path / "needs_tabulate"
    folder.mkdir()
    (folder / "main.py").write_text("import tabulate\n")
    (folder / "requirements.txt").write_text("tabulate==0.9.0\npandas==3.1.1\n")
    bundle = Bundle.create(tmp_path / "in", datasets.load("iris"), task_type="clustering")
    result = LocalRuntime().run(Invocation("needs_tabulate", service_files(folder), bundle.path, tmp_path / "out"))
    assert not result.ok and "tabulate==0.9.0 (it has no tabulate)" in result.stderr and "pandas==" not in result.stderr
    assert diagnose(result).error_class is ErrorClass.ENVIRONMENT


def test_an_output_linking_to_a_host_file_breaks_the_contract_before_anything_reads_it(home, tmp_path):
    """A link in an output would be followed by the worker (checks, report, the next step), with its rights."""
    from dagsmith.execution.contract import check_bundle

    code = ("import os, shutil, sys\n"
            "shutil.copytree('/input', '/output', dirs_exist_ok=True)\n"
            f"os.symlink('{home[0]}/airflow-serve/secrets.json', '/output/report.md')\n")
    bundle = Bundle.create(tmp_path / "in", datasets.load("iris"), task_type="clustering")
    result = LocalRuntime().run(Invocation("link_planter", {"main.py": code}, bundle.path, tmp_path / "out"))
    assert result.ok, result.stderr
    problems = check_bundle(tmp_path / "out", target=None, expected_outputs=[])
    assert problems == ["the output holds links or special files (report.md); a bundle holds plain files"]


def test_an_interpreter_under_tmp_stays_visible_beside_the_private_tmp(tmp_path):
    """A checkout (and its venv) under /tmp: the sandbox's own /tmp must not hide the interpreter."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    bundle = Bundle.create(tmp_path / "in", datasets.load("iris"), task_type="clustering")
    script = ("import sys; from pathlib import Path; from dagsmith.runtime.base import Invocation; "
              "from dagsmith.runtime.local import LocalRuntime; "
              "r = LocalRuntime().run(Invocation('where', {'main.py': 'import sys; print(sys.prefix)'}, "
              "Path(sys.argv[1]), Path(sys.argv[2]))); print(r.exit_code, r.stdout.strip(), r.stderr[-500:])")
    shown = subprocess.run([str(venv / "bin" / "python"), "-c", script, str(bundle.path), str(tmp_path / "out")],
                           capture_output=True, text=True, timeout=120,
                           env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert shown.stdout.split()[:2] == ["0", str(venv)], shown.stdout + shown.stderr


def test_a_sandbox_its_worker_left_is_found_by_its_output_folder_and_killed(tmp_path):
    """What ``reap`` does for a lost try: a worker killed while bwrap set a sandbox up leaves its inner half waiting
    for ever, out of ``--die-with-parent``'s reach; found by the try's output folder, it is killed whole."""
    from dagsmith.runtime.base import stage

    bundle = Bundle.create(tmp_path / "in", datasets.load("iris"), task_type="clustering")
    invocation = Invocation("left_behind", {"main.py": ""}, bundle.path, tmp_path / "attempts" / "03-1", {}, LIMITS)
    invocation.output_dir.mkdir(parents=True)
    command = sandbox.command(invocation, stage(invocation, tmp_path / "stage"), None, ["sleep", "infinity"],
                              seccomp=None, bounded=False)
    left = subprocess.Popen(command, start_new_session=True)
    # found by its command line (bwrap's once the forked child has executed it), as its inner half is once forked
    folder = str(invocation.output_dir)
    wait_until(lambda: len(processes_naming(folder)) >= 2, timeout=30, what="both halves of bwrap to start")
    other = tmp_path / "attempts" / "03-2"
    assert sandbox.kill_writing_to([other]) == 0 and left.poll() is None  # another try's sandbox is not touched
    assert sandbox.kill_writing_to([invocation.output_dir]) >= 2
    assert left.wait(timeout=10) == -9
    wait_until(lambda: not processes_naming(folder), timeout=10,
               what=lambda: f"no half left, found {processes_naming(folder)}")
