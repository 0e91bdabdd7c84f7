"""Load: 20 `dagsmith pipelines rerun` processes at once on one store (each its own Airflow `dag.test()` run),
over four pipelines of different tasks; every run completes with its own dataset, workspace and records."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from sqlalchemy import select

from dagsmith import datasets
from dagsmith.agents.planner import plan
from dagsmith.store import schema
from dagsmith.store.db import session_scope

CONCURRENT = 20
#: dataset, goal, the metric its results must hold (each task writes different ones).
TASKS = [("penguins", "predict the species", "accuracy"), ("diabetes", "predict disease progression", "rmse"),
         ("iris", "group the flowers into clusters", "silhouette"), ("wa_churn", "predict customer churn", "roc_auc")]


def test_twenty_concurrent_runs_complete_without_mixing(store, embedder, tmp_path):
    pipelines = []
    for name, goal, metric in TASKS:
        frame = datasets.load(name)
        frame = frame.drop(columns=["species"]) if name == "iris" else frame.head(400)
        source = tmp_path / f"{name}.csv"
        frame.to_csv(source, index=False)
        pipelines.append((plan(source, goal, settings=store, embedder=embedder).pipeline.id, source, metric))
    env = {**os.environ, "DAGSMITH_DATABASE_URL": store.database_url, "DAGSMITH_HOME": str(store.home)}

    def rerun(index: int) -> tuple[int, str, str, subprocess.CompletedProcess]:
        pipeline_id, source, metric = pipelines[index % len(pipelines)]
        copy = tmp_path / f"run-{index:02d}-{source.name}"  # each run its own file, so a mix-up would show
        copy.write_bytes(source.read_bytes())
        proc = subprocess.run([sys.executable, "-m", "dagsmith.cli.app", "pipelines", "rerun", str(pipeline_id),
                               "--data", str(copy), "--json"], capture_output=True, text=True, env=env, timeout=1500)
        return pipeline_id, str(copy), metric, proc

    started = time.monotonic()
    with ThreadPoolExecutor(CONCURRENT) as pool:
        results = list(pool.map(rerun, range(CONCURRENT)))
    wall = time.monotonic() - started
    summaries = []
    for pipeline_id, dataset, metric, proc in results:
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        summary = json.loads(proc.stdout)
        assert summary["pipeline_id"] == pipeline_id and summary["status"] == "completed"
        assert summary["dataset"] == dataset and metric in summary["metrics"], (dataset, summary["metrics"])
        summaries.append(summary)
    assert len({s["workspace"] for s in summaries}) == CONCURRENT
    assert len({s["execution_id"] for s in summaries}) == CONCURRENT
    with session_scope(store) as session:
        for summary in summaries:
            execution = session.get(schema.Execution, summary["execution_id"])
            assert (execution.dataset, execution.workspace) == (summary["dataset"], summary["workspace"])
            steps = set(session.scalars(select(schema.PipelineStep.id).where(
                schema.PipelineStep.pipeline_id == execution.pipeline_id)))
            attempts = session.scalars(select(schema.StepAttempt).where(
                schema.StepAttempt.execution_id == execution.id)).all()
            assert attempts and {a.step_id for a in attempts} <= steps  # no try recorded against another run
            assert all(a.status != "running" for a in attempts)
    print(f"{CONCURRENT} concurrent runs in {wall:.0f} s; per run "
          f"{sorted(round(s['time_to_results_seconds']) for s in summaries)}")
