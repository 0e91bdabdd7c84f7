"""Benchmark: how long Airflow takes to parse dagsmith's pipeline DAGs as pipelines accumulate.

Run with ``python -m dagsmith.bench.dag_parsing`` (``make bench-parse``). For each count, a fresh DAGSMITH_HOME
gets that many synthetic spec files of a typical pipeline (nine steps, a search over three models, a page of
explanation), then each parse runs in a new process with Airflow already imported, as the dag-processor forks
one per file: the time counts importing dagsmith and building the DAGs. Measured:

- every pipeline DAG file, without parsing context, as the dag-processor parses them (the slowest file is what
  meets ``dagbag_import_timeout``; the sum is a full pass's CPU time);
- one file building every pipeline, as before the DAGs were split over files;
- the one file that defines a DAG, with the parsing context set to it, as a worker starting a task parses.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from dagsmith.airflow.local import DAGS_FOLDER
from dagsmith.airflow.pipeline_shards import SHARDS, dag_file_name
from dagsmith.bench.stats import table
from dagsmith.execution.specs import dag_id, spec_file
from dagsmith.models.catalog import Stage
from dagsmith.models.plan import DagSpec, DagStep, ModelSearch

COUNTS = (0, 100, 1_000, 5_000)
_STAGES = (Stage.LOADING, Stage.VALIDATION, Stage.IMPUTATION, Stage.SPLITTING, Stage.ENCODING, Stage.SCALING,
           Stage.MODELLING, Stage.EVALUATION, Stage.VISUALISATION)
_MODELS = ("gradient_boosting_classifier", "random_forest_classifier", "logistic_regression")

# Runs a parse as the dag-processor's child does (Airflow imported first), optionally for one DAG.
_PARSE = """
import json, runpy, sys, time
import airflow.sdk
from airflow.sdk.definitions._internal.dag_parsing_context import _airflow_parsing_context_manager
started = time.perf_counter()
with _airflow_parsing_context_manager(dag_id=sys.argv[2] or None):
    if sys.argv[1] == "all":  # one file for every pipeline
        from dagsmith.airflow.pipeline_dag import load_dags
        from dagsmith.config import Settings
        from dagsmith.execution.specs import spec_file, spec_ids, specs_dir
        folder = specs_dir(Settings.from_env())
        dags = load_dags([spec_file(folder, pipeline_id) for pipeline_id in spec_ids(folder)])
    else:
        dags = {k: v for k, v in runpy.run_path(sys.argv[1]).items() if k.startswith("dagsmith_pipeline_")}
print("PARSED " + json.dumps({"seconds": time.perf_counter() - started, "dags": len(dags)}))
"""


def synthetic_spec(pipeline_id: int) -> DagSpec:
    """A spec shaped like a built classification pipeline's: a chain of steps, one of them a model search."""
    search = ModelSearch(candidates=list(_MODELS), budget_seconds=20.0, metric="roc_auc",
                         reason="three model families suit a binary target")
    steps = [DagStep(position=position, stage=stage, microservice=f"{stage}_service",
                     depends_on=[position - 1] if position else [], alternatives=3,
                     search=search if stage is Stage.MODELLING else None)
             for position, stage in enumerate(_STAGES)]
    return DagSpec(pipeline_id=pipeline_id, name=f"churn-{pipeline_id}", goal="predict customer churn", owner="bench",
                   dataset="/data/churn.csv", steps=steps,
                   explanation="**churn**: predict customer churn\n" + "- a ranked candidate\n" * 100)


def write_specs(folder: Path, count: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for pipeline_id in range(1, count + 1):
        spec_file(folder, pipeline_id).write_text(synthetic_spec(pipeline_id).model_dump_json(), encoding="utf-8")


def _parse(target: str, home: Path, for_dag: str | None = None) -> dict:
    env = {**os.environ, "DAGSMITH_HOME": str(home)}
    proc = subprocess.run([sys.executable, "-c", _PARSE, target, for_dag or ""], env=env, capture_output=True,
                          text=True, timeout=3600)
    if "PARSED " not in proc.stdout:
        raise RuntimeError(f"parsing {target} failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.split("PARSED ", 1)[1].splitlines()[0])


def run(counts: tuple[int, ...]) -> list[dict]:
    files = [DAGS_FOLDER / dag_file_name(shard) for shard in range(SHARDS)]  # pipeline id ``shard`` is in shard
    results = []
    for count in counts:
        with tempfile.TemporaryDirectory(prefix="dagsmith-bench-") as home:
            write_specs(Path(home) / "pipelines", count)
            shards = [_parse(str(file), Path(home)) for file in files]
            if sum(s["dags"] for s in shards) != count:
                raise RuntimeError(f"the DAG files built {sum(s['dags'] for s in shards)} of {count} pipelines")
            one_file = _parse("all", Path(home))
            wanted = max(count, 1)
            single = _parse(str(DAGS_FOLDER / dag_file_name(wanted)), Path(home), dag_id(wanted))
            results.append({"pipelines": count, "one_file_s": round(one_file["seconds"], 2),
                            "slowest_file_s": round(max(s["seconds"] for s in shards), 2),
                            "all_files_s": round(sum(s["seconds"] for s in shards), 2),
                            "one_dag_s": round(single["seconds"], 2), "one_dag_built": single["dags"]})
            print(json.dumps(results[-1]), flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipelines", type=int, nargs="+", default=list(COUNTS))
    args = parser.parse_args()
    rows = run(tuple(args.pipelines))
    print(table(["pipelines", "one file s", f"slowest of {SHARDS} files s", f"all {SHARDS} files s", "one DAG s"],
                [[f"{row['pipelines']:,}", str(row["one_file_s"]), str(row["slowest_file_s"]), str(row["all_files_s"]),
                  str(row["one_dag_s"])] for row in rows]))


if __name__ == "__main__":
    main()
