"""The production-like deployment files: docker-compose.yaml, the two Dockerfiles and .env.example agree with each
other and with the repository (every service, path, build, script and variable they name exists)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

COMPOSE = yaml.safe_load((ROOT / "docker-compose.yaml").read_text())
SERVICES = COMPOSE["services"]
AIRFLOW = {"airflow-api-server": "api-server",
           "airflow-scheduler": ["python", "-m", "dagsmith.airflow.scheduler", "--skip-serve-logs"],
           "airflow-dag-processor": "dag-processor", "airflow-triggerer": ["triggerer", "--skip-serve-logs"]}
#: Where the dagsmith image keeps the repository (Dockerfile: COPY . /opt/dagsmith).
IMAGE_ROOT = "/opt/dagsmith"
_VARIABLE = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)(?::?[-?][^}]*)?\}")


def _env_example() -> dict[str, str]:
    lines = (ROOT / ".env.example").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


def _pins(text: str) -> set[str]:
    return {line.split("#")[0].strip() for line in text.splitlines()} - {""}


def test_every_airflow_service_runs_its_command_on_the_dagsmith_image_after_init():
    for name, command in AIRFLOW.items():
        service = SERVICES[name]
        assert service["command"] == command
        assert service["image"] == SERVICES["airflow-init"]["image"]
        assert service["depends_on"]["airflow-init"]["condition"] == "service_completed_successfully"
    # the UI and API on the host's loopback address unless AIRFLOW_BIND says otherwise; no log server anywhere
    assert SERVICES["airflow-api-server"]["ports"] == ["${AIRFLOW_BIND:-127.0.0.1}:${AIRFLOW_PORT:-8080}:8080"]


def test_airflow_metadata_and_dagsmith_store_are_separate_databases_with_pgvector_for_dagsmith():
    env = SERVICES["airflow-scheduler"]["environment"]
    assert "@airflow-db:5432/airflow" in env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
    assert "@dagsmith-db:5432/dagsmith" in env["DAGSMITH_DATABASE_URL"]
    assert SERVICES["dagsmith-db"]["image"].startswith("pgvector/pgvector:")
    assert not SERVICES["airflow-db"]["image"].startswith("pgvector/")


def test_containers_are_reached_through_the_socket_proxy_never_the_raw_socket():
    for name, service in SERVICES.items():
        mounts_socket = any("docker.sock" in str(volume) for volume in service.get("volumes", []))
        assert mounts_socket == (name == "docker-socket-proxy"), name
    proxy = SERVICES["docker-socket-proxy"]
    assert all(":ro" in v for v in proxy["volumes"])
    assert {k for k, v in proxy["environment"].items() if v == 1} == {
        "CONTAINERS", "IMAGES", "POST", "ALLOW_START", "ALLOW_STOP", "PING", "VERSION"}
    env = SERVICES["airflow-scheduler"]["environment"]
    assert env["DOCKER_HOST"] == "tcp://docker-socket-proxy:2375" and env["DAGSMITH_RUNTIME"] == "docker"
    assert "ports" not in proxy  # only on the compose network


def test_generated_dags_appear_quickly_and_run_unpaused():
    env = SERVICES["airflow-dag-processor"]["environment"]
    refresh = re.fullmatch(r"\$\{DAG_REFRESH_SECONDS:-(\d+)\}", env["AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL"])
    assert refresh and int(refresh.group(1)) <= 30 and int(_env_example()["DAG_REFRESH_SECONDS"]) <= 30
    assert env["AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION"] == "false"


def test_workspaces_are_mounted_at_the_same_path_the_engine_sees():
    for name in [*AIRFLOW, "airflow-init", "dagsmith-data"]:
        assert "${DAGSMITH_DATA_DIR}:${DAGSMITH_DATA_DIR}" in SERVICES[name]["volumes"], name
    assert SERVICES["airflow-scheduler"]["environment"]["DAGSMITH_HOME"].startswith("${DAGSMITH_DATA_DIR")
    assert Path(_env_example()["DAGSMITH_DATA_DIR"]).is_absolute()


def test_the_celery_profile_adds_a_broker_and_workers_sharing_one_workspace_volume():
    """Two or more workers by default, on dagsmith's queue and Airflow's default one, each mounting the workspaces
    volume where every Airflow service finds runs' workspaces; init marks it, and the workers check the mark."""
    worker, redis = SERVICES["airflow-worker"], SERVICES["redis"]
    assert worker["profiles"] == redis["profiles"] == ["celery"]
    assert worker["command"][:3] == ["python", "-m", "dagsmith.airflow.worker"]
    assert worker["command"][-2:] == ["--queues", "${DAGSMITH_QUEUE:-dagsmith},default"]
    assert int(re.fullmatch(r"\$\{DAGSMITH_CELERY_WORKERS:-(\d+)\}", worker["deploy"]["replicas"]).group(1)) >= 2
    assert worker["depends_on"]["redis"]["condition"] == "service_healthy"
    assert "--appendonly" in redis["command"] and "ports" not in redis  # kept across restarts; compose network only
    env = worker["environment"]
    assert env["AIRFLOW__CORE__EXECUTOR"] == "${AIRFLOW_EXECUTOR:-LocalExecutor}"
    assert env["AIRFLOW__CELERY__BROKER_URL"] == "redis://redis:6379/0"
    assert env["AIRFLOW__CELERY__RESULT_BACKEND"].startswith("db+postgresql") and "@airflow-db:5432/airflow" in \
        env["AIRFLOW__CELERY__RESULT_BACKEND"]
    workspaces = "dagsmith-workspaces:" + env["DAGSMITH_WORKSPACE_ROOT"]
    for name in [*AIRFLOW, "airflow-init", "airflow-worker"]:
        assert workspaces in SERVICES[name]["volumes"], name
    assert COMPOSE["volumes"]["dagsmith-workspaces"]["driver_opts"]["device"] == env["DAGSMITH_WORKSPACE_ROOT"]
    assert "mark_shared(Settings.from_env().workspaces_dir)" in (ROOT / "scripts" / "compose-init.sh").read_text()
    assert "$$DAGSMITH_HOME/workspaces" in SERVICES["dagsmith-data"]["entrypoint"][-1]  # the bind's folder exists


@pytest.mark.parametrize("name", sorted(n for n, s in SERVICES.items() if "build" in s))
def test_every_build_has_its_context_and_dockerfile(name):
    build = SERVICES[name]["build"]
    context = ROOT / build["context"]
    assert (context / build["dockerfile"]).is_file()


def test_every_bind_mount_source_and_entrypoint_script_exists():
    for name, service in SERVICES.items():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("./"):
                assert (ROOT / source).is_dir(), f"{name}: {source}"
        entrypoint = service.get("entrypoint") or []
        for part in entrypoint:
            if part.startswith(IMAGE_ROOT + "/"):
                script = ROOT / part.removeprefix(IMAGE_ROOT + "/")
                assert script.is_file() and os.access(script, os.X_OK), f"{name}: {part}"


def test_every_variable_the_compose_file_reads_is_in_env_example_and_none_is_left_unused():
    used = set(_VARIABLE.findall((ROOT / "docker-compose.yaml").read_text()))
    documented = set(_env_example())
    assert used == documented, {"undocumented": used - documented, "unused": documented - used}


def test_the_airflow_image_matches_the_pinned_airflow_and_installs_dagsmith():
    dockerfile = (ROOT / "Dockerfile").read_text()
    pinned = re.search(r"^apache-airflow==(\S+)$", (ROOT / "requirements.txt").read_text(), re.M).group(1)
    assert re.search(rf"^FROM apache/airflow:{re.escape(pinned)}-python3\.11$", dockerfile, re.M)
    assert f"COPY --chown=airflow:root . {IMAGE_ROOT}" in dockerfile and f"-e {IMAGE_ROOT}" in dockerfile
    assert SERVICES["airflow-init"]["image"].endswith(":" + pinned)


def test_the_runtime_image_carries_every_catalog_pin_and_runs_as_non_root():
    """Operators may add packages for their own services; the shipped catalog's pins must all be there."""
    catalog = set()
    for requirements in (ROOT / "microservices").glob("*/requirements.txt"):
        catalog |= {pin for pin in _pins(requirements.read_text()) if not re.match(r"dagsmith[-_]kit", pin, re.I)}
    assert catalog <= _pins((ROOT / "runtime" / "requirements.txt").read_text())
    dockerfile = (ROOT / "runtime" / "Dockerfile").read_text()
    assert "USER 10001:10001" in dockerfile and "COPY include/dagsmith_kit/" in dockerfile
    assert SERVICES["dagsmith-runtime"]["image"] == "dagsmith-runtime:py311"


def test_build_contexts_leave_local_state_out():
    ignored = set((ROOT / ".dockerignore").read_text().split())
    assert {".venv", ".dagsmith", ".git", ".env"} <= ignored
