"""Benchmark: pipeline runs triggered through the REST API on the LocalExecutor and on two Celery workers.

Run with ``python -m dagsmith.bench.executors`` (``make bench-executors``). One deployment per executor
(``dagsmith serve``'s, the local runtime), the same pipelines built once beforehand (one per owner: runs of one
pipeline never overlap, so the runs are spread over ``--pipelines`` of them), ``--runs`` runs triggered at once
through the REST API. Reported per executor: runs that succeeded, failed, were lost (never recorded) or were left
running; throughput (runs per minute, first trigger to last end); and the p50 and p95 time a pipeline step's task
waited in the queue (Airflow's ``queued_when`` to ``start_date``).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from airflow.utils.state import DagRunState

from dagsmith import datasets
from dagsmith.agents.planner import plan
from dagsmith.airflow.rest import AirflowClient
from dagsmith.airflow.serve import LocalDeployment, free_port
from dagsmith.bench.stats import percentile
from dagsmith.catalog.upload import sync
from dagsmith.config import Settings
from dagsmith.embeddings import default_embedder
from dagsmith.execution.specs import dag_id, write_spec
from dagsmith.store.databases import scratch_database

GOAL = "explore this dataset and describe it"
FINISHED = {DagRunState.SUCCESS, DagRunState.FAILED}


def _at(stamp: str | None) -> datetime | None:
    return datetime.fromisoformat(stamp) if stamp else None


def _measure(settings: Settings, home: Path, dags: list[str], dataset: Path, runs: int, executor: str,
             workers: int, timeout: float) -> dict:
    """Trigger ``runs`` runs over ``dags`` on a fresh deployment with ``executor`` and wait for all of them."""
    with scratch_database(settings) as metadata:
        served = LocalDeployment(replace(settings, home=home), port=free_port(), runtime="local",
                                 metadata_url=metadata.database_url, refresh_seconds=5, executor=executor,
                                 workers=workers)
        with served:
            login = served.login()
            client = AirflowClient(served.url, login.user, login.password)
            for dag in dags:
                while client.call("GET", f"/api/v2/dags?dag_id_pattern={dag}")["total_entries"] == 0:
                    time.sleep(1)
            started = time.monotonic()
            triggered = [(dag, client.trigger(dag, {"dataset": str(dataset), "user": "bench"}))
                         for dag in (dags[i % len(dags)] for i in range(runs))]
            deadline = started + timeout
            states: dict[str, str] = {}
            while time.monotonic() < deadline:
                states = {run_id: client.run(dag, run_id)["state"] for dag, run_id in triggered}
                if all(state in FINISHED for state in states.values()):
                    break
                time.sleep(5)
            seconds = time.monotonic() - started
            waits = [(_at(task["start_date"]) - _at(task["queued_when"])).total_seconds()
                     for dag, run_id in triggered for task in client.run_tasks(dag, run_id)
                     if task["task_id"].startswith("step_") and task["queued_when"] and task["start_date"]]
    counts = {"succeeded": sum(s == DagRunState.SUCCESS for s in states.values()),
              "did_not_succeed": sum(s == DagRunState.FAILED for s in states.values())}
    return {"executor": executor if executor == "local" else f"celery ({workers} workers)", "runs": runs,
            **counts, "lost": runs - len(states), "left_running": sum(s not in FINISHED for s in states.values()),
            "seconds": round(seconds, 1), "runs_per_minute": round(runs / seconds * 60, 2),
            "queue_p50_s": round(percentile(waits, 0.5), 2) if waits else None,
            "queue_p95_s": round(percentile(waits, 0.95), 2) if waits else None}


def run(runs: int, pipelines: int, workers: int, timeout: float) -> list[dict]:
    embedder = default_embedder()
    with scratch_database() as settings, tempfile.TemporaryDirectory(prefix="dagsmith-bench-") as folder:
        sync("microservices", settings, embedder)
        home = Path(folder) / "home"
        built = replace(settings, home=home)
        dataset = home / "datasets" / "penguins.csv"  # where a deployment reads datasets from
        dataset.parent.mkdir(parents=True, exist_ok=True)
        datasets.load("penguins").to_csv(dataset, index=False)
        dags = []
        for owner in range(pipelines):
            planned = plan(dataset, GOAL, user=f"bench-{owner}", settings=built, embedder=embedder).pipeline
            write_spec(planned.id, built, retry_delay_seconds=1)
            dags.append(dag_id(planned.id))
        rows = [_measure(settings, home, dags, dataset, runs, executor, workers, timeout)
                for executor in ("local", "celery")]
        for row in rows:
            print(json.dumps(row), flush=True)
    return rows


def _markdown(rows: list[dict]) -> str:
    lines = [("| executor | runs | succeeded | failed | lost | left running | seconds | runs/min | queue p50 s "
             "| queue p95 s |"), "|---|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['executor']} | {r['runs']} | {r['succeeded']} | {r['did_not_succeed']} | {r['lost']} "
              f"| {r['left_running']} | {r['seconds']} | {r['runs_per_minute']} | {r['queue_p50_s']} "
              f"| {r['queue_p95_s']} |" for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--pipelines", type=int, default=10, help="pipelines the runs are spread over")
    parser.add_argument("--workers", type=int, default=2, help="Celery workers")
    parser.add_argument("--timeout", type=float, default=7200, help="seconds to wait for the runs, per executor")
    args = parser.parse_args(argv)
    print(_markdown(run(args.runs, args.pipelines, args.workers, args.timeout)))


if __name__ == "__main__":
    main()
