"""The spec file a pipeline's DAG is built from, written whole while runs of that pipeline write it together."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from dagsmith.agents.planner import plan
from dagsmith.execution.specs import read_spec, write_spec
from tests.execution.conftest import NUMERIC_PREPARATION


def test_reruns_of_one_pipeline_write_its_spec_together_and_leave_it_whole(store, embedder, churn_csv):
    planned = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder,
                   choices=NUMERIC_PREPARATION).pipeline
    with ThreadPoolExecutor(8) as pool:
        written = set(pool.map(lambda _: write_spec(planned.id, store), range(32)))
    [path] = written
    assert read_spec(path).pipeline_id == planned.id
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []
