"""Benchmark: planning latency (agents A1-A4) for datasets of 1K, 50K and 500K rows.

Run with ``python -m dagsmith.bench.plan_latency`` (``make bench-plan``). The tables are real data
(ggplot2's diamonds, 53,940 rows, resampled with replacement to the wanted size) written as CSV, and the
goal is a regression on price. The embedding model is loaded before timing starts; the catalog is the
shipped one, indexed into a fresh database that is dropped afterwards.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from dagsmith import datasets
from dagsmith.agents.planner import plan
from dagsmith.store.databases import scratch_database
from dagsmith.catalog.upload import sync
from dagsmith.embeddings import default_embedder

SIZES = (1_000, 50_000, 500_000)
GOAL = "predict the price of a diamond from its cut, colour, clarity and size"


def _dataset(rows: int, folder: Path) -> Path:
    frame = datasets.load("diamonds").sample(n=rows, replace=rows > 53_940, random_state=rows)
    path = folder / f"diamonds_{rows}.csv"
    frame.to_csv(path, index=False)
    return path


def run(sizes: tuple[int, ...], repeats: int, catalog: Path) -> list[dict]:
    embedder = default_embedder()
    embedder.embed(["warm up"])
    results = []
    with scratch_database() as settings, tempfile.TemporaryDirectory(prefix="dagsmith-bench-") as folder:
        sync(catalog, settings, embedder)
        for rows in sizes:
            path = _dataset(rows, Path(folder))
            runs = []
            for _ in range(repeats):
                started = time.perf_counter()
                result = plan(path, GOAL, settings=settings, embedder=embedder)
                runs.append({"total": time.perf_counter() - started, **result.timings})
            median = {key: round(statistics.median(r[key] for r in runs), 3) for key in runs[0]}
            results.append({"rows": rows, "file_mb": round(path.stat().st_size / 1e6, 2), "repeats": repeats,
                            "median_s": median, "sampled": result.profile.sampled,
                            "pipeline_valid": result.pipeline.valid})
            print(f"  {rows:>9,} rows: {median['total']:.2f} s", flush=True)
    return results


def _markdown(results: list[dict]) -> str:
    lines = ["| rows | CSV MB | total s | profile s | intent s | recommend s | build s | profiled on a sample |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        m = r["median_s"]
        lines.append(f"| {r['rows']:,} | {r['file_mb']} | {m['total']} | {m['profile']} | {m['intent']} | "
                     f"{m['recommend']} | {m['build']} | {'yes' if r['sampled'] else 'no'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES),
                        help="row counts (default 1000 50000 500000)")
    parser.add_argument("--repeats", type=int, default=3, help="plans per size; the median is reported")
    parser.add_argument("--catalog", type=Path, default=Path("microservices"))
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    print(f"planning on {', '.join(f'{s:,}' for s in args.sizes)} rows, {args.repeats} runs each ...", flush=True)
    results = run(tuple(args.sizes), args.repeats, args.catalog)
    print(_markdown(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
