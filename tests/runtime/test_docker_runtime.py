"""The container runtime, for real: podman serving the Docker API, the runtime image, real and hostile services.

The session fixture runs scripts/setup-container-runtime.sh (seconds once cached); if it fails the tests fail.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
from pathlib import Path

import pandas as pd
import pytest

from dagsmith import datasets
from dagsmith.runtime.base import Invocation, InvocationResult, Limits, RuntimeUnavailable
from dagsmith.runtime.docker import RUNTIME_IMAGE, DockerRuntime
from dagsmith_kit import Bundle
from tests.conftest import CATALOG, ROOT
from tests.waiting import wait_until

HOSTILE = ROOT / "tests" / "data" / "hostile"
SOCKET = os.environ.get("DAGSMITH_PODMAN_SOCKET", "/run/dagsmith/podman.sock")
QUICK = Limits(timeout_seconds=60, memory_mb=512, cpus=1.0, max_processes=64)


@pytest.fixture(scope="session")
def runtime() -> DockerRuntime:
    setup = subprocess.run([str(ROOT / "scripts" / "setup-container-runtime.sh")], capture_output=True, text=True,
                           timeout=900)
    assert setup.returncode == 0, f"setup failed:\n{setup.stdout[-3000:]}\n{setup.stderr[-3000:]}"
    return DockerRuntime(f"unix://{SOCKET}")


@pytest.fixture
def penguins(tmp_path) -> Path:
    return Bundle.create(tmp_path / "penguins", datasets.load("penguins"), target="species",
                         task_type="multiclass_classification").path


def service_files(folder: Path) -> dict[str, str]:
    return {path.name: path.read_text(encoding="utf-8") for path in folder.iterdir() if path.is_file()}


def invoke(runtime: DockerRuntime, folder: Path, input_dir: Path, output_dir: Path, params: dict | None = None,
           limits: Limits = QUICK):
    invocation = Invocation(folder.name, service_files(folder), input_dir, output_dir, params or {}, limits)
    return runtime.run(invocation)


def test_median_imputer_fills_a_real_bundle(runtime, penguins, tmp_path):
    result = invoke(runtime, CATALOG / "median_imputer", penguins, tmp_path / "out")
    assert result.ok, result.stderr
    out = Bundle.open(tmp_path / "out")
    data = out.table("data")
    assert len(data) == 344
    assert data.drop(columns=["species"]).isna().sum().sum() == 0
    assert pd.read_parquet(penguins / "data.parquet")["bill_length_mm"].isna().any()  # input untouched
    assert out.meta["lineage"][-1]["params"] == {}


@pytest.mark.parametrize("service", ["lightgbm_classifier", "gradient_boosting_classifier", "roc_curve_plot"])
def test_services_with_native_libraries_run_in_the_runtime_image(runtime, tmp_path, service):
    """LightGBM needs the OpenMP runtime, the plots matplotlib: both must be in the image, not only on the host."""
    frame = datasets.load("breast_cancer")
    train, test = frame.iloc[::2], frame.iloc[1::2]
    split = Bundle.create(tmp_path / "split", target="diagnosis", task_type="binary_classification")
    split.write_table("train", train)
    split.write_table("test", test)
    if service == "roc_curve_plot":
        model = invoke(runtime, CATALOG / "logistic_regression", split.path, tmp_path / "model")
        assert model.ok, model.stderr
        split = Bundle.open(tmp_path / "model")
    result = invoke(runtime, CATALOG / service, split.path, tmp_path / "out")
    assert result.ok, result.stderr
    out = Bundle.open(tmp_path / "out")
    assert len(out.predictions()) == len(test)


def test_network_is_unreachable(runtime, penguins, tmp_path):
    result = invoke(runtime, HOSTILE / "network_probe", penguins, tmp_path / "out")
    assert result.exit_code != 0 and "reached" not in result.stdout
    assert "Network is unreachable" in result.stderr


@pytest.mark.parametrize("path", ["/input/escape.txt", "/service/escape.txt", "/params.json", "/escape.txt",
                                  "/opt/venv/escape.txt"])
def test_writes_outside_output_fail(runtime, penguins, tmp_path, path):
    result = invoke(runtime, HOSTILE / "escape_writer", penguins, tmp_path / "out", {"path": path})
    assert result.exit_code != 0, result.stdout
    assert "Read-only file system" in result.stderr or "Permission denied" in result.stderr
    assert not (penguins / "escape.txt").exists()


def test_writes_inside_output_succeed(runtime, penguins, tmp_path):
    result = invoke(runtime, HOSTILE / "escape_writer", penguins, tmp_path / "out", {"path": "/output/ok.txt"})
    assert result.ok, result.stderr
    assert (tmp_path / "out" / "ok.txt").read_text() == "escaped"


def test_timeout_kills_the_container(runtime, penguins, tmp_path):
    limits = Limits(timeout_seconds=3, memory_mb=256)
    result = invoke(runtime, HOSTILE / "sleeper", penguins, tmp_path / "out", limits=limits)
    assert result.timed_out and not result.ok and not result.out_of_memory
    assert result.seconds < 15
    assert "timeout" in result.stderr


def test_memory_limit_kills_a_hog(runtime, penguins, tmp_path):
    limits = Limits(timeout_seconds=60, memory_mb=256)
    result = invoke(runtime, HOSTILE / "memory_hog", penguins, tmp_path / "out", limits=limits)
    assert not result.ok and not result.timed_out
    assert result.out_of_memory or "MemoryError" in result.stderr


def test_a_timeout_at_the_memory_limit_is_reported_as_out_of_memory(runtime, penguins, tmp_path):
    """A service that holds nearly all its memory until its time runs out reads as a memory problem, as the
    kernel's slow reclaim without swap makes a hog look when its OOM killer acts late."""
    files = service_files(HOSTILE / "sleeper") | {
        "main.py": "import time\nheld = 'x' * (236 << 20)\nprint('holding', flush=True)\ntime.sleep(3600)\n"}
    invocation = Invocation("memory_squatter", files, penguins, tmp_path / "out", {},
                            Limits(timeout_seconds=8, memory_mb=256))
    result = runtime.run(invocation)
    assert result.timed_out and result.out_of_memory, (result.stdout, result.stderr)
    assert "holding" in result.stdout
    assert re.search(r"killed after the 8 s timeout while at its memory limit \(2\d\d of 256 MiB\): out of memory",
                     result.stderr), result.stderr


def test_process_limit_stops_a_fork_bomb(runtime, penguins, tmp_path):
    limits = Limits(timeout_seconds=60, memory_mb=512, max_processes=32)
    result = invoke(runtime, HOSTILE / "fork_bomb", penguins, tmp_path / "out", limits=limits)
    assert result.exit_code != 0 and "forked 200" not in result.stdout
    assert "Resource temporarily unavailable" in result.stderr


def test_runs_as_service_user_without_the_host_environment(runtime, penguins, tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSMITH_TEST_SECRET", "canary-123")
    result = invoke(runtime, HOSTILE / "introspect", penguins, tmp_path / "out")
    assert result.ok, result.stderr
    seen = json.loads(result.stdout)
    assert (seen["uid"], seen["gid"]) == (10001, 10001)
    assert "DAGSMITH_TEST_SECRET" not in seen["environment"]
    assert "canary-123" not in result.stdout
    assert seen["environment"]["OMP_NUM_THREADS"] == "1"


def test_catalog_pins_reuse_the_runtime_image(runtime, penguins, tmp_path):
    invocation = Invocation("median_imputer", service_files(CATALOG / "median_imputer"), penguins, tmp_path / "o")
    assert runtime.image_for(invocation) == RUNTIME_IMAGE


def test_a_stored_service_pinning_what_the_image_lacks_is_refused_without_building(runtime, penguins, tmp_path):
    """Only a catalog row stored before uploads were held to the runtime's packages can pin tabulate."""
    from dagsmith.healing.classify import ErrorClass, diagnose

    folder = HOSTILE / "extra_pin"
    invocation = Invocation(folder.name, service_files(folder), penguins, tmp_path / "out", {}, QUICK)
    images = {image["Id"] for image in runtime.api.images(all=True)}
    result = runtime.run(invocation)
    assert not result.ok and result.stdout == ""
    assert "tabulate==0.9.0 (it has no tabulate)" in result.stderr and "pandas==3.1.1" not in result.stderr
    assert diagnose(result).error_class is ErrorClass.ENVIRONMENT, result.stderr
    assert {image["Id"] for image in runtime.api.images(all=True)} == images
    assert not (tmp_path / "out").exists()


def test_unreachable_engine_says_how_to_fix_it(penguins, tmp_path):
    invocation = Invocation("introspect", service_files(HOSTILE / "introspect"), penguins, tmp_path / "out")
    with pytest.raises(RuntimeUnavailable, match="setup-container-runtime.sh"):
        DockerRuntime("unix:///nonexistent/docker.sock").run(invocation)


def test_missing_runtime_image_says_how_to_fix_it(runtime, penguins, tmp_path):
    invocation = Invocation("introspect", service_files(HOSTILE / "introspect"), penguins, tmp_path / "out")
    with pytest.raises(RuntimeUnavailable, match="setup-container-runtime.sh"):
        DockerRuntime(runtime.base_url, image="dagsmith-runtime:absent").run(invocation)


def test_killing_a_step_task_stops_and_removes_its_container(runtime, penguins, tmp_path):
    """Airflow calls ``on_kill`` when a running task is stopped (marked failed, timed out, its worker told to
    stop): the step operator's container goes with it, and its try ends at once."""
    from dagsmith.airflow.step_operator import StepOperator

    invocation = Invocation("sleeper", service_files(HOSTILE / "sleeper"), penguins, tmp_path / "out", {}, QUICK,
                            {"dagsmith.test": tmp_path.name})
    operator = StepOperator(task_id="step_00_sleep__sleeper", position=0)
    finished: list[InvocationResult] = []
    step = DockerRuntime(runtime.base_url, driver=lambda spec: operator._run_container(spec, {}))
    worker = threading.Thread(target=lambda: finished.append(step.run(invocation)))
    worker.start()
    its_container = {"label": f"dagsmith.test={tmp_path.name}"}
    wait_until(lambda: runtime.api.containers(filters=its_container), timeout=120, what="the sleeper's container")
    operator.on_kill()
    worker.join(timeout=60)
    assert not worker.is_alive() and finished, "the try did not end"
    assert runtime.api.containers(all=True, filters=its_container) == []
    assert not finished[0].ok and "stopped before it finished" in finished[0].stderr, finished
