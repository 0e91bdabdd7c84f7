"""Benchmark: time to results per task type, in the local and the container runtime, through Airflow.

Run with ``python -m dagsmith.bench.run_latency`` (``make bench-run``). For each task type a real offline
dataset and a goal are planned (agents A1-A4) and run as the pipeline's own Airflow DAG, on both of
``dagsmith run``'s paths: ``in-process`` (planning here, then ``dag.test()``) and ``warm`` (submitted to a
running deployment, started once for the benchmark, where the meta-DAG plans and the scheduler runs the
pipeline). Reported per task type, path and runtime: median and p90 time to results (goal submitted to final
output), and where the time goes: planning (on the warm path, from the submission until the meta-DAG's last task
that builds a pipeline ended, the scheduler's waits included), the time in which
microservice invocations run (side by side ones counted once), and the rest (Airflow start-up, scheduling, task
overhead, waiting for a new DAG to be registered). The fixed cost is everything but the invocations: planning and
the rest, median and p90. ``local-unsandboxed`` is the local runtime with
``DAGSMITH_UNSAFE_NO_SANDBOX=1``, measured only to price the sandbox (in-process only): the local runtime's and the
container runtime's overheads are their invocation times over it, for the same steps.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from sqlalchemy import select

from dagsmith import datasets
from dagsmith.agents.planner import plan
from dagsmith.airflow.local import start_dag_test
from dagsmith.airflow.rest import AirflowClient
from dagsmith.airflow.serve import LocalDeployment, free_port
from dagsmith.bench.stats import percentile
from dagsmith.catalog.upload import sync
from dagsmith.cli.submit import BUILDERS, META_DAG, Deployment, submit
from dagsmith.config import Settings
from dagsmith.embeddings import default_embedder
from dagsmith.execution.specs import write_spec
from dagsmith.models.airflow import AirflowState
from dagsmith.models.intent import GivenFields
from dagsmith.models.plan import PipelineStatus
from dagsmith.runtime.sandbox import UNSANDBOXED_VARIABLE
from dagsmith.store import schema
from dagsmith.store.databases import scratch_database
from dagsmith.store.db import session_scope

#: Runtimes compared: the unsandboxed local runtime is the baseline that prices the sandbox.
RUNTIMES = ("local-unsandboxed", "local", "docker")
#: ``dagsmith run``'s paths: planning and ``dag.test()`` in its process, or submitted to a running deployment.
PATHS = ("in-process", "warm")
#: The runtimes measured on the warm path (the deployment's services run unsandboxed only if it was started so).
WARM_RUNTIMES = ("local", "docker")
TASKS = {
    "binary_classification": ("wa_churn", None, "predict which customers will churn"),
    "multiclass_classification": ("penguins", None, "predict the species of a penguin"),
    "regression": ("diabetes", None, "predict disease progression after one year"),
    "clustering": ("iris", ["species"], "group the flowers into clusters"),
    "dimensionality_reduction": ("wine", ["cultivar"], "reduce the wine measurements to a few components"),
    "anomaly_detection": ("breast_cancer", ["diagnosis"], "find anomalous tumours"),
    "exploratory_analysis": ("penguins", None, "explore this dataset and describe it"),
}


def _invocations(settings, execution_id: int) -> float:
    """Seconds in which at least one microservice ran: a model search's candidates run side by side, so overlapping
    tries count once."""
    with session_scope(settings) as session:
        spans = sorted((a.started_at, a.finished_at) for a in session.scalars(
            select(schema.StepAttempt).where(schema.StepAttempt.execution_id == execution_id)) if a.finished_at)
    covered, reached = 0.0, None
    for start, end in spans:
        start = max(start, reached or start)
        if end > start:
            covered += (end - start).total_seconds()
            reached = end
    return covered


def _one_run(path: Path, goal: str, runtime: str, settings, embedder, logs: Path) -> dict:
    started = time.perf_counter()
    pipeline = plan(path, goal, settings=settings, embedder=embedder).pipeline
    planned = time.perf_counter()
    write_spec(pipeline.id, settings)
    log = logs / f"{pipeline.id}.log"
    variables = {UNSANDBOXED_VARIABLE: "1"} if runtime == "local-unsandboxed" else {}  # read by the run's process
    with open(log, "w", encoding="utf-8") as output:
        process = start_dag_test(pipeline.id, {"dataset": str(path), "runtime": runtime.split("-")[0], "user": "bench"},
                                 settings, output, variables=variables)
        process.wait()
    total = time.perf_counter() - started
    ended = process.result()
    with session_scope(settings) as session:
        execution = session.scalar(select(schema.Execution).where(schema.Execution.pipeline_id == pipeline.id))
        execution_id, status = execution.id, execution.status
    invocations = _invocations(settings, execution_id)
    return {"total": total, "plan": planned - started, "invocations": invocations,
            "airflow": total - (planned - started) - invocations, "status": status,
            "state": ended.state if ended else "no result"}


def _warm_run(path: Path, goal: str, runtime: str, deployment: Deployment, client: AirflowClient) -> dict:
    """One ``dagsmith run`` submitted to the running deployment, as the command does (its output left out)."""
    submitted, started = time.time(), time.perf_counter()
    [report] = submit(deployment, path, goal, runtime=runtime, user="bench", choose=[], each_target=False,
                      given=GivenFields(), descriptions={}, settings=deployment.roots, json=True)
    total = time.perf_counter() - started
    [meta] = client.call("GET", f"/api/v2/dags/{META_DAG}/dagRuns?order_by=-start_date&limit=1")["dag_runs"]
    planned = max(datetime.fromisoformat(task["end_date"]).timestamp()
                  for task in client.run_tasks(META_DAG, meta["dag_run_id"])
                  if task["task_id"] in BUILDERS and task["state"] == AirflowState.SUCCESS)
    planning = planned - submitted
    invocations = _invocations(deployment.roots, report["execution_id"])
    return {"total": total, "plan": planning, "invocations": invocations, "airflow": total - planning - invocations,
            "status": report["status"], "state": report["airflow_state"]}


@contextmanager
def _deployment(settings: Settings, home: Path) -> Iterator[tuple[Deployment, AirflowClient]]:
    """A running deployment on ``home`` with its own metadata database, and a login to it."""
    with scratch_database(settings) as metadata:
        served = LocalDeployment(replace(settings, home=home), port=free_port(), runtime="local",
                                 metadata_url=metadata.database_url, refresh_seconds=5)
        with served:
            login = served.login()
            yield (Deployment(served.url, login.user, login.password, served.settings),
                   AirflowClient(served.url, login.user, login.password))


def run(tasks: list[str], runtimes: list[str], repeats: int, paths: list[str]) -> list[dict]:
    embedder = default_embedder()
    embedder.embed(["warm up"])
    rows = []
    with (scratch_database() as settings, tempfile.TemporaryDirectory(prefix="dagsmith-bench-") as folder,
          ExitStack() as stack):
        sync("microservices", settings, embedder)
        home = Path(folder) / "home"
        warm = stack.enter_context(_deployment(settings, home)) if "warm" in paths else None
        for task in tasks:
            name, drop, goal = TASKS[task]
            path = home / "datasets" / f"{name}.csv"  # where a deployment reads datasets from
            path.parent.mkdir(parents=True, exist_ok=True)
            datasets.load(name).drop(columns=drop or []).to_csv(path, index=False)
            for runtime, way in [(r, w) for w in paths for r in runtimes if w == "in-process" or r in WARM_RUNTIMES]:
                runs = [_warm_run(path, goal, runtime, *warm) if way == "warm"
                        else _one_run(path, goal, runtime, settings, embedder, Path(folder)) for _ in range(repeats)]
                totals = [r["total"] for r in runs]
                fixed = [r["total"] - r["invocations"] for r in runs]
                row = {"task": task, "path": way, "runtime": runtime, "runs": len(runs),
                       "succeeded": sum(r["status"] == PipelineStatus.COMPLETED for r in runs),
                       "median_s": round(statistics.median(totals), 2), "p90_s": round(percentile(totals, 0.9), 2),
                       "fixed_s": round(statistics.median(fixed), 2), "fixed_p90_s": round(percentile(fixed, 0.9), 2),
                       **{f"{k}_s": round(statistics.median(r[k] for r in runs), 2)
                          for k in ("plan", "invocations", "airflow")}}
                rows.append(row)
                print(f"  {task:<28} {way:<10} {runtime:<7} median {row['median_s']:>6} s  "
                      f"({row['succeeded']}/{len(runs)} ok)", flush=True)
    return rows


def _markdown(rows: list[dict]) -> str:
    lines = [("| task | path | runtime | ok | median s | p90 s | planning s | invocations s | Airflow and other s | "
              "Airflow share | fixed cost s | fixed cost p90 s |"), "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        share = r["airflow_s"] / r["median_s"] if r["median_s"] else 0
        lines.append(f"| {r['task']} | {r['path']} | {r['runtime']} | {r['succeeded']}/{r['runs']} | {r['median_s']} "
                     f"| {r['p90_s']} | {r['plan_s']} | {r['invocations_s']} | {r['airflow_s']} | {share:.0%} "
                     f"| {r['fixed_s']} | {r['fixed_p90_s']} |")
    rows = [r for r in rows if r["path"] == "in-process"]  # the runtimes are compared on one path
    base = {r["task"]: r for r in rows if r["runtime"] == "local-unsandboxed"}
    for runtime, label in (("local", "Sandboxed local runtime"), ("docker", "Container runtime")):
        ratios = [r["invocations_s"] / base[r["task"]]["invocations_s"] for r in rows
                  if r["runtime"] == runtime and r["task"] in base and base[r["task"]]["invocations_s"]]
        if ratios:
            lines += ["", (f"{label}: invocations take {statistics.median(ratios):.2f}x the unsandboxed local "
                           "runtime's (median over task types).")]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    parser.add_argument("--runtimes", nargs="+", default=list(RUNTIMES), choices=RUNTIMES)
    parser.add_argument("--paths", nargs="+", default=list(PATHS), choices=PATHS)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    rows = run(args.tasks, args.runtimes, args.repeats, args.paths)
    print(_markdown(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
