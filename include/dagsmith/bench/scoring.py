"""Benchmark: how fast a model version scores new rows, against the model's own predict in one process.

Run with ``python -m dagsmith.bench.scoring`` (``make bench-score``). The shipped services build a churn model
(split, median imputation, one-hot encoding, scaling, logistic regression: each a process, as a pipeline runs
them), ``dagsmith_kit.freeze`` makes a version of it, and rows resampled from the table are scored:

- by ``python -m dagsmith_kit.scoring`` as a process (what the sandbox runs: start-up, schema checks, drift
  counts, chunked Parquet output), with its peak memory;
- in one process with everything loaded: the recorded transforms and the model's ``predict_proba`` on the whole
  table at once, the least any scorer could spend (this benchmark unpickles the version in its own process: the
  services that made it are the shipped ones, never an upload).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from dagsmith import datasets
from dagsmith.bench.stats import table
from dagsmith_kit import Bundle, transforms
from dagsmith_kit.freeze import freeze

SIZES = (10_000, 100_000, 1_000_000)
CHAIN = ("train_test_splitter", "median_imputer", "onehot_encoder", "standard_scaler", "logistic_regression")


def build_version(catalog: Path, work: Path) -> tuple[Path, pd.DataFrame]:
    """A version of the churn model the shipped services train, and the raw table it was trained from."""
    frame = datasets.load("wa_churn")
    bundle = Bundle.create(work / "step-0", frame, target="churn", task_type="binary_classification")
    for position, service in enumerate(CHAIN, start=1):
        out = work / f"step-{position}"
        subprocess.run([sys.executable, str(catalog / service / "main.py"), "--input", str(bundle.path),
                        "--output", str(out)], check=True, capture_output=True, timeout=600)
        bundle = Bundle.open(out)
    raw = frame.drop(columns=["churn"])
    return freeze(bundle.path, frame, work / "version", id_columns=[], target="churn",
                  task_type="binary_classification"), raw


def in_process(version: Path, rows: pd.DataFrame) -> float:
    """Seconds for the recorded transforms and the model on ``rows`` at once, everything already loaded."""
    import joblib

    from dagsmith_kit.scoring import prepare

    loaded, model = transforms.load(version), joblib.load(version / "model.joblib")
    features = json.loads((version / "model.json").read_text())["features"]
    started = time.perf_counter()
    model.predict_proba(prepare(rows, loaded, "churn")[features])
    return time.perf_counter() - started


def as_process(version: Path, source: Path, out: Path) -> tuple[float, int, dict]:
    """Seconds and peak memory (MB) of ``python -m dagsmith_kit.scoring`` on ``source``, and its summary."""
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "dagsmith_kit.scoring", "--model", str(version), "--input",
                                str(source), "--output", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise RuntimeError(f"scoring failed: {process.stderr.read().decode()[-2000:]}")
    return seconds, round(usage.ru_maxrss / 1024), json.loads((out / "scoring.json").read_text())


def run(sizes: tuple[int, ...], catalog: Path) -> list[dict]:
    results = []
    with tempfile.TemporaryDirectory(prefix="dagsmith-bench-scoring-") as folder:
        work = Path(folder)
        version, raw = build_version(catalog, work)
        for size in sizes:
            rows = raw.sample(size, replace=True, random_state=size).reset_index(drop=True)
            source = work / f"rows-{size}.parquet"
            rows.to_parquet(source, index=False)
            seconds, peak_mb, summary = as_process(version, source, work / f"scored-{size}")
            once = in_process(version, rows)
            results.append({"rows": size, "scorer_s": round(seconds, 2), "scorer_rows_per_s": round(size / seconds),
                            "scorer_inner_s": summary["seconds"], "scorer_load_s": summary["load_seconds"],
                            "in_process_s": round(once, 3),
                            "in_process_rows_per_s": round(size / once),
                            "peak_rss_mb": peak_mb})
            print(json.dumps(results[-1]), flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--catalog", type=Path, default=Path("microservices"), help="shipped catalog folder")
    args = parser.parse_args()
    rows = run(tuple(args.rows), args.catalog)
    print(table(["rows", "scorer process s", "rows/s", "inside the scorer s", "of which loading s", "in one process s",
                 "rows/s", "scorer peak RSS MB"],
                [[f"{r['rows']:,}", str(r["scorer_s"]), f"{r['scorer_rows_per_s']:,}", str(r["scorer_inner_s"]),
                  str(r["scorer_load_s"]), str(r["in_process_s"]), f"{r['in_process_rows_per_s']:,}",
                  str(r["peak_rss_mb"])] for r in rows]))


if __name__ == "__main__":
    main()
