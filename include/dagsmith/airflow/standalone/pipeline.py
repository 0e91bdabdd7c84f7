"""A dagsmith pipeline, exported to run on any Airflow 3 with the Docker provider, without dagsmith installed.

Written by ``dagsmith pipelines export``. The folder beside this file (its name without ``.py``) holds what the
DAG runs: ``pipeline.json`` (the steps, their order, the image and limits), each service's code under
``services/`` and each step's parameters under ``params/``. Each step runs its service, as it was when exported,
in its own container of the dagsmith runtime image: no network, a read-only root and input, a non-root user,
memory, CPU and process limits and a system-call filter (``seccomp.json``: no namespaces, mounts, ptrace...).
A failed step is retried once; self-healing, model search and the run history are dagsmith's own and do not
come along.

Each run works in ``<workspace_root>/<run id>``: ``input`` holds the dataset as the first step reads it and
``steps/NN`` what step NN wrote. Trigger with ``{"dataset": "/path/to/new.csv"}`` to run on new data.

When the pipeline had a champion model version, the folder also holds it (``model/``) and this file defines a second
DAG, ``pipeline.json``'s ``scoring.dag_id``: triggered with ``{"dataset": "/path/to/rows.csv"}`` (CSV or Parquet), it
scores the rows with that version in the same sandbox and leaves ``predictions.parquet`` and ``scoring.json`` (rows
scored, unseen categories, values out of range, drift per feature) in ``<workspace_root>/<run id>/output``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from datetime import timedelta
from pathlib import Path

from airflow.providers.docker.operators.docker import DockerOperator
from airflow.sdk import DAG, Param, task

HERE = Path(__file__).resolve().with_suffix("")
SPEC = json.loads((HERE / "pipeline.json").read_text(encoding="utf-8"))
WORKSPACE = "{{ ti.xcom_pull(task_ids='prepare') }}"


class _SandboxedClient:
    """The Docker API client, adding to every container's host config the limits DockerOperator has no
    arguments for (a read-only root, no capabilities, no privilege gain, a process cap, no swap, a hard CPU
    quota) and the system-call filter ``seccomp.json``."""

    def __init__(self, client, sandbox: dict):
        self._client, self._sandbox = client, sandbox

    def create_host_config(self, **kwargs):
        options = [*self._sandbox["security_opt"], f"seccomp={_seccomp_option(self._client)}"]
        return self._client.create_host_config(**kwargs, **{**self._sandbox, "security_opt": options})

    def __getattr__(self, name):
        return getattr(self._client, name)


class SandboxedDockerOperator(DockerOperator):
    """DockerOperator whose containers also get the sandbox limits of ``pipeline.json``."""

    @property
    def cli(self):
        return _SandboxedClient(super().cli, SPEC["sandbox"])


def _seccomp_option(client) -> str:
    """The filter as the engine takes it: Docker the JSON itself, podman (whose Docker API opens the option as a
    path on its own host, the one the bind mounts come from) the file's path."""
    profile = HERE / "seccomp.json"
    components = client.version().get("Components") or []
    if any("podman" in (component.get("Name") or "").lower() for component in components):
        return str(profile)
    return profile.read_text(encoding="utf-8")


def _step_dir(position: int) -> str:
    return f"steps/{position:02d}"


def _bind(target: str, source: str, *, read_only: bool) -> dict:
    return {"target": target, "source": source, "type": "bind", "read_only": read_only}


def _run_folder(params: dict, run_id: str) -> Path:
    """A run's folder under its ``workspace_root``, made anew (a cleared task starts its run over)."""
    workspace = Path(params["workspace_root"]) / re.sub(r"[^A-Za-z0-9_.-]", "_", run_id)
    shutil.rmtree(workspace, ignore_errors=True)
    (workspace / "input").mkdir(parents=True)
    return workspace


def _readable_by_service(workspace: Path) -> None:
    for path in [workspace, *workspace.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


def _writable_by_service(folder: Path) -> None:
    """The service's user must own its output folder (its kit copies the input's mode onto it), else write it."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        os.chown(folder, SPEC["uid"], SPEC["uid"])
    except PermissionError:
        folder.chmod(0o777)


def _sandboxed(task_id: str, service: str, params: str, source: str, output: str, *, mounts: tuple = (),
               **kwargs) -> SandboxedDockerOperator:
    """A container running ``service`` on the run's ``source`` folder into its ``output`` folder, in the sandbox,
    with ``mounts`` besides."""
    return SandboxedDockerOperator(
        task_id=task_id,
        image=SPEC["image"],
        docker_url=os.environ.get("DOCKER_HOST") or SPEC["docker_url"],
        command=SPEC["command"],
        environment={**SPEC["environment"], "DAGSMITH_SERVICE": service},
        user=f"{SPEC['uid']}:{SPEC['uid']}",
        network_mode="none",
        mem_limit=SPEC["sandbox"]["memswap_limit"],  # no swap: the same as the memory limit
        cpus=SPEC["cpus"],
        working_dir="/tmp",
        mounts=[_bind("/service", str(HERE / "services" / service), read_only=True),
                _bind("/params.json", str(HERE / "params" / params), read_only=True),
                _bind("/input", f"{WORKSPACE}/{source}", read_only=True),
                _bind("/output", f"{WORKSPACE}/{output}", read_only=False),
                {"target": "/tmp", "source": None, "type": "tmpfs", "tmpfs_size": SPEC["tmpfs_bytes"]},
                *mounts],
        mount_tmp_dir=False,
        auto_remove="force",
        execution_timeout=timedelta(seconds=SPEC["timeout_seconds"]),
        **kwargs,
    )


with DAG(
    dag_id=SPEC["dag_id"],
    description=SPEC["goal"],
    doc_md=__doc__,
    schedule=None,
    catchup=False,
    max_active_runs=1,
    tags=["dagsmith", "exported"],
    params={"dataset": Param(SPEC["dataset"], type="string", description="The table to run the pipeline on."),
            "workspace_root": Param(SPEC["workspace_root"], type="string",
                                    description="Where each run's folders are made.")},
    default_args={"owner": SPEC["owner"]},
) as dag:

    @task
    def prepare(params=None, run_id=None) -> str:
        """Make the run's folders and its input: the dataset as a bundle (``bundle.json`` beside a copy)."""
        dataset = Path(params["dataset"])
        if not dataset.is_file():
            raise FileNotFoundError(f"the dataset {dataset} does not exist")
        workspace = _run_folder(params, run_id)
        source = "source" + ("".join(dataset.suffixes[-2:]) or ".csv")
        shutil.copyfile(dataset, workspace / "input" / source)
        meta = {**SPEC["bundle"], "lineage": [], "source": source, "source_name": dataset.name}
        (workspace / "input" / "bundle.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
        _readable_by_service(workspace)
        for step in SPEC["steps"]:
            _writable_by_service(workspace / _step_dir(step["position"]))
        return str(workspace)

    @task
    def results(workspace: str) -> dict:
        """What the run produced: its folder and the metrics of the last step that wrote any."""
        metrics = {}
        for step in SPEC["steps"]:
            written = Path(workspace) / _step_dir(step["position"]) / "metrics.json"
            if written.is_file():
                metrics = json.loads(written.read_text(encoding="utf-8"))
        print(f"the run's folders: {workspace}\nmetrics: {json.dumps(metrics, indent=2)}")
        return {"workspace": workspace, "metrics": metrics}

    started = prepare()
    tasks = {}
    for step in SPEC["steps"]:
        position = step["position"]
        source = _step_dir(step["depends_on"][0]) if step["depends_on"] else "input"
        tasks[position] = _sandboxed(
            f"{position:02d}_{step['stage']}", step["service"], f"{position:02d}.json", source, _step_dir(position),
            doc_md=f"{step['stage']}: `{step['service']}` (code {step['code_hash']})",
            labels={"dagsmith.service": step["service"], "dagsmith.code_hash": step["code_hash"]},
            retries=1,
            retry_delay=timedelta(seconds=30),
        )
    for step in SPEC["steps"]:
        upstream = [tasks[p] for p in step["depends_on"]] or [started]
        upstream >> tasks[step["position"]]
    ends = [tasks[p] for p in tasks if not any(p in s["depends_on"] for s in SPEC["steps"])]
    ends >> results(started)

SCORING = SPEC.get("scoring")
if SCORING:
    with DAG(
        dag_id=SCORING["dag_id"],
        description=f"Scores rows with version {SCORING['version']} of the model of: {SPEC['goal']}",
        doc_md=__doc__,
        schedule=None,
        catchup=False,
        tags=["dagsmith", "exported", "scoring"],
        params={"dataset": Param(type="string", description="The rows to score (CSV or Parquet)."),
                "workspace_root": Param(SPEC["workspace_root"], type="string",
                                        description="Where each run's folders are made.")},
        default_args={"owner": SPEC["owner"]},
    ) as scoring_dag:

        @task(task_id="prepare")
        def prepare_scoring(params=None, run_id=None) -> str:
            """Make the run's folders: ``input`` holds a copy of the rows, ``output`` the scorer writes."""
            rows = Path(params["dataset"])
            if not rows.is_file():
                raise FileNotFoundError(f"the rows {rows} do not exist")
            workspace = _run_folder(params, f"score-{run_id}")
            shutil.copyfile(rows, workspace / "input" / ("rows.parquet" if rows.suffix == ".parquet" else "rows.csv"))
            _readable_by_service(workspace)
            _writable_by_service(workspace / "output")
            return str(workspace)

        @task(task_id="results")
        def scored(workspace: str) -> dict:
            """Where the predictions are, and what the scorer said of the rows (schema notes, drift per feature)."""
            report = json.loads((Path(workspace) / "output" / "scoring.json").read_text(encoding="utf-8"))
            print(f"predictions: {workspace}/output/predictions.parquet\nscoring: {json.dumps(report, indent=2)}")
            return {"predictions": f"{workspace}/output/predictions.parquet", "rows": report.get("rows_scored")}

        folder = prepare_scoring()
        score = _sandboxed("score", SCORING["service"], "scoring.json", "input", "output",
                           doc_md=f"scores with model version {SCORING['version']}",
                           mounts=(_bind("/model", str(HERE / "model"), read_only=True),),
                           labels={"dagsmith.service": SCORING["service"]})
        folder >> score >> scored(folder)
