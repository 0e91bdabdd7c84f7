"""``dagsmith pipelines export``: a pipeline as a standalone DAG for any Airflow with the Docker provider.

The DAG file is ``airflow/standalone/pipeline.py``, copied as it is: it imports Airflow and the standard library
only, and reads what it runs from the folder written beside it (``pipeline.json``, the services' code, each
step's parameters), so the Airflow that runs it needs neither dagsmith nor its database. Each step runs the
service it has now, as a container of the runtime image with the same sandbox as dagsmith's own container
runtime (``runtime.docker``); a modelling step's search keeps its first candidate, which still tunes itself.

When the pipeline has a champion model version, the same file also defines its scoring DAG
(``dagsmith_export_score_<id>``): the version's folder is copied beside the steps, and a run scores the rows it is
given with ``dagsmith_kit.scoring`` in a sandboxed container, as ``dagsmith predict`` does.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from dagsmith.config import Settings
from dagsmith.errors import InputError
from dagsmith.models.catalog import Stage
from dagsmith.models.plan import ModelSearch
from dagsmith.registry import versions
from dagsmith.runtime import seccomp
from dagsmith.runtime.base import Invocation, materialise
from dagsmith.runtime.docker import (COMMAND, ENVIRONMENT, RUNTIME_IMAGE, SERVICE_UID, DockerRuntime,
                                     sandbox_kwargs)
from dagsmith.runtime.packages import not_provided, unavailable
from dagsmith.store import schema
from dagsmith.store.db import session_scope, stored
from dagsmith.store.pipelines import steps_of

TEMPLATE = Path(__file__).resolve().parents[1] / "airflow" / "standalone" / "pipeline.py"
SCORING_SERVICE = "dagsmith_scoring"
#: The exported scoring step's code. The Airflow that runs an export may lack pandas, so the rows reach the container
#: as given (CSV or Parquet) and are staged as Parquet in its private /tmp for ``dagsmith_kit.scoring``.
SCORER = '''"""Score the rows in the input (CSV or Parquet) with the model version mounted at /model."""
import sys
from pathlib import Path

import pandas as pd

from dagsmith_kit.scoring import main

args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
[given] = Path(args["--input"]).iterdir()
rows = given if given.suffix == ".parquet" else Path("/tmp/rows.parquet")
if rows != given:
    pd.read_csv(given).to_parquet(rows, index=False)
main(["--model", "/model", "--input", str(rows), "--output", args["--output"]])
'''


class ExportedStep(BaseModel):
    position: int
    stage: Stage
    service: str
    code_hash: str
    depends_on: list[int]


class ExportedScoring(BaseModel):
    """The scoring DAG's part of ``pipeline.json``: the champion's version folder is ``model/`` beside it."""

    dag_id: str
    version: int
    service: str = SCORING_SERVICE


class ExportedPipeline(BaseModel):
    """``pipeline.json``: everything the standalone DAG file reads."""

    dag_id: str
    pipeline_id: int
    goal: str
    owner: str
    exported_at: str
    dataset: str
    workspace_root: str
    image: str
    docker_url: str
    command: list[str]
    environment: dict[str, str]
    uid: int
    cpus: float
    timeout_seconds: int
    tmpfs_bytes: int
    sandbox: dict
    bundle: dict
    steps: list[ExportedStep]
    scoring: ExportedScoring | None = None


class ExportError(InputError):
    """The pipeline cannot be exported (unknown, or a service the runtime image cannot run); the message says which."""


def export_dag_id(pipeline_id: int) -> str:
    return f"dagsmith_export_{pipeline_id}"


def export_score_dag_id(pipeline_id: int) -> str:
    return f"dagsmith_export_score_{pipeline_id}"


def export_pipeline(pipeline_id: int, folder: Path, settings: Settings, *, workspace_root: Path | None = None,
                    docker_url: str | None = None) -> Path:
    """Write ``<folder>/dagsmith_export_<id>.py`` and its folder (replacing an earlier export); returns the file. The
    file defines the scoring DAG too when the pipeline has a champion."""
    dag_id = export_dag_id(pipeline_id)
    limits = settings.step_limits
    staging = folder / f".{dag_id}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    with session_scope(settings) as session:
        pipeline = session.get(schema.Pipeline, pipeline_id)
        if pipeline is None:
            raise ExportError(f"no pipeline {pipeline_id}; `dagsmith pipelines list` shows them")
        steps = []
        for step in steps_of(session, pipeline_id):
            service = stored(session, schema.Microservice, step.microservice_id)
            files = stored(session, schema.MicroserviceVersion, service.current_version_id).files
            invocation = Invocation(service.name, files, Path(), Path())
            missing = unavailable(invocation.requirements)
            if missing:
                raise ExportError(f"step {step.position} ({step.stage}) runs {service.name}, which the runtime image "
                                  f"cannot run: {not_provided(missing)}")
            params = ModelSearch.model_validate(step.search).params_for(service.name) if step.search else step.params
            materialise(files, staging / "services" / service.name)
            _write(staging / "params" / f"{step.position:02d}.json", json.dumps(params, indent=2, default=str))
            steps.append(ExportedStep(position=step.position, stage=step.stage, service=service.name,
                                      code_hash=invocation.code_hash, depends_on=step.depends_on))
        scoring = _stage_champion(settings, pipeline_id, staging)
        roles = pipeline.plan.get("roles", {})
        spec = ExportedPipeline(
            dag_id=dag_id, pipeline_id=pipeline_id, goal=pipeline.goal, owner=pipeline.owner,
            exported_at=datetime.now(UTC).isoformat(timespec="seconds"), dataset=pipeline.dataset,
            workspace_root=str((workspace_root or folder / f"{dag_id}-runs").resolve()), image=RUNTIME_IMAGE,
            docker_url=docker_url or DockerRuntime().base_url, command=COMMAND, environment=ENVIRONMENT,
            uid=SERVICE_UID, cpus=limits.cpus, timeout_seconds=limits.timeout_seconds,
            tmpfs_bytes=limits.memory_mb * 1024 * 1024, sandbox=sandbox_kwargs(limits),
            bundle={"format_version": 1, "task_type": pipeline.task_type, "target": pipeline.target,
                    "id_columns": roles.get("id_columns") or [], "time_column": roles.get("time_column"),
                    "excluded_columns": roles.get("excluded_columns") or []},
            steps=steps, scoring=scoring)
    _write(staging / "pipeline.json", spec.model_dump_json(indent=2))
    _write(staging / "seccomp.json", json.dumps(seccomp.container_profile()))
    _write(staging / ".airflowignore", "*\n")  # the services' code is no DAG: Airflow need not parse it
    for path in [staging, *staging.rglob("*")]:  # the services' user reads it all, writes none of it
        path.chmod(0o755 if path.is_dir() else 0o444)
    target, dag_file = folder / dag_id, folder / f"{dag_id}.py"
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    _write(dag_file, TEMPLATE.read_text(encoding="utf-8"))
    return dag_file


def _stage_champion(settings: Settings, pipeline_id: int, staging: Path) -> ExportedScoring | None:
    """The champion's version folder and the scoring step's code, staged for the scoring DAG (None: no champion)."""
    champion = versions.champion_of(settings, pipeline_id)
    if champion is None:
        return None
    shutil.copytree(champion.path, staging / "model")
    materialise({"main.py": SCORER}, staging / "services" / SCORING_SERVICE)
    _write(staging / "params" / "scoring.json", "{}")
    return ExportedScoring(dag_id=export_score_dag_id(pipeline_id), version=champion.version)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
