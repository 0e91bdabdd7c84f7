"""Benchmark: how a run's time and memory grow with its table, for one task at 10k, 100k and 1M rows.

Run with ``python -m dagsmith.bench.scale`` (``make bench-scale``). A customer table of each size is made (numbers,
categories and an identifier; whether a customer churned depends on some of them; no two rows alike, so nothing is
deduplicated away), written as Parquet and run the way a person runs it, ``dagsmith run DATA GOAL --target churned
--json`` in a process of its own, on a scratch database holding the shipped catalog. Reported per size: time to
results, the model search's seconds (from its first candidate's start to its last one's end, side by side or not)
beside every other step's and beside what is spent outside the steps (planning, Airflow, judging the result), and each
try's seconds and peak memory (its memory cgroup, ``step_attempts.peak_mb``; a search's candidates that were not handed
on included) against the table's own size in memory: the most copies of the table one
step holds at once, counted as what its peak grew by over the same step's on the smallest table (an interpreter and
its libraries cost the same at every size), or over the leanest step's there for a step the smallest run lacks.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from sqlalchemy import select

from dagsmith.catalog.upload import sync
from dagsmith.config import Settings
from dagsmith.embeddings import default_embedder
from dagsmith.models.catalog import Stage
from dagsmith.models.execution import StepStatus
from dagsmith.store import schema
from dagsmith.store.databases import scratch_database
from dagsmith.store.db import session_scope

SIZES = (10_000, 100_000, 1_000_000)
GOAL = "predict which customers will churn"
TARGET = "churned"
MIB = 1 << 20


def customers(rows: int, seed: int = 0) -> pd.DataFrame:
    """A churn table of ``rows`` customers: churn is likelier on monthly contracts, short tenures, high charges and
    many support calls, with noise, so a model has something to find and nothing decides it alone."""
    rng = np.random.default_rng(seed)
    tenure = rng.integers(0, 73, rows)
    monthly = rng.normal(65, 30, rows).clip(18, 120).round(2)
    calls = rng.poisson(1.5, rows)
    contract = rng.choice(["month-to-month", "one year", "two year"], rows, p=[0.55, 0.25, 0.2])
    logit = (-1.0 + 1.4 * (contract == "month-to-month") - 0.04 * tenure + 0.015 * (monthly - 65) + 0.35 * calls
             + rng.normal(0, 1, rows))
    return pd.DataFrame({
        "customer_id": [f"C{number:08d}" for number in range(rows)],
        "age": rng.integers(18, 90, rows),
        "tenure_months": tenure,
        "monthly_charges": monthly,
        "total_charges": (tenure * monthly * rng.uniform(0.9, 1.1, rows)).round(2),
        "support_calls": calls,
        "contract": contract,
        "payment_method": rng.choice(["card", "bank transfer", "electronic check", "mailed check"], rows),
        "region": rng.choice([f"region {number}" for number in range(12)], rows),
        TARGET: np.where(rng.random(rows) < 1 / (1 + np.exp(-logit)), "yes", "no"),
    })


def _run(data: Path, settings: Settings, home: Path, time_budget: int | None) -> dict:
    """``dagsmith run`` on ``data`` as a process of its own; its JSON summary."""
    command = [sys.executable, "-m", "dagsmith.cli.app", "run", str(data), GOAL, "--target", TARGET, "--json"]
    command += ["--time-budget", str(time_budget)] if time_budget else []
    env = {**os.environ, "DAGSMITH_DATABASE_URL": settings.database_url, "DAGSMITH_HOME": str(home)}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode not in (0, 1):  # 1: the run itself failed, which the summary says
        raise RuntimeError(f"dagsmith run exited {done.returncode}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def _steps(settings: Settings, execution_id: int) -> list[dict]:
    """Each try that ended: stage, service, how it ended, when it started (seconds into the run), its seconds and peak
    memory. A search's candidates that were not handed on end ``skipped`` and spent their time all the same."""
    with session_scope(settings) as session:
        started = session.get(schema.Execution, execution_id).started_at
        rows = session.execute(select(schema.PipelineStep.position, schema.PipelineStep.stage, schema.StepAttempt)
                               .join(schema.StepAttempt, schema.StepAttempt.step_id == schema.PipelineStep.id)
                               .join(schema.Microservice, schema.Microservice.id == schema.StepAttempt.microservice_id)
                               .add_columns(schema.Microservice.name)
                               .where(schema.StepAttempt.execution_id == execution_id,
                                      schema.StepAttempt.finished_at.is_not(None))
                               .order_by(schema.PipelineStep.position, schema.StepAttempt.started_at)).all()
        return [{"position": position, "stage": stage, "service": name, "status": attempt.status,
                 "peak_mb": attempt.peak_mb, "start": round((attempt.started_at - started).total_seconds(), 2),
                 "seconds": round((attempt.finished_at - attempt.started_at).total_seconds(), 2)}
                for position, stage, attempt, name in rows]


def _model_seconds(result: dict) -> float:
    """The model search's span: its candidates run side by side, so their seconds overlap and do not add up."""
    tries = [s for s in result["steps"] if s["stage"] == Stage.MODELLING]
    return max((s["start"] + s["seconds"] for s in tries), default=0.0) - min((s["start"] for s in tries), default=0.0)


def _other_seconds(result: dict) -> float:
    """Every other step's tries, which run one after another."""
    return sum(s["seconds"] for s in result["steps"] if s["stage"] != Stage.MODELLING)


def measure(sizes: tuple[int, ...], time_budget: int | None = None) -> list[dict]:
    results = []
    with (scratch_database() as settings, tempfile.TemporaryDirectory(prefix="dagsmith-bench-scale-") as folder):
        sync("microservices", settings, default_embedder())
        for size in sizes:
            table = customers(size)
            data = Path(folder) / f"customers-{size}.parquet"
            table.to_parquet(data, index=False)
            summary = _run(data, settings, Path(folder) / "home", time_budget)
            results.append({"rows": size, "table_mb": round(table.memory_usage(deep=True).sum() / MIB, 1),
                            "status": summary["status"], "seconds": summary["time_to_results_seconds"],
                            "quality": summary.get("quality"), "steps": _steps(settings, summary["execution_id"])})
            print(json.dumps(results[-1]), flush=True)
    return results


def markdown(results: list[dict]) -> str:
    """The curve as two tables: the whole run per size, then every step per size."""
    first = results[0] if results else {"steps": [], "table_mb": 0}
    fixed = {_name(s): s["peak_mb"] for s in first["steps"] if s["peak_mb"]}
    leanest = min(fixed.values(), default=0)
    lines = [("| rows | table in memory MB | status | time to results s | model search s | other steps s "
              "| outside the steps s | hungriest step | its peak MB | most copies of the table in one step |"),
             "|---|---|---|---|---|---|---|---|---|---|"]
    for result in results:
        steps = [s for s in result["steps"] if s["peak_mb"]]
        model = _model_seconds(result)
        other = _other_seconds(result)
        hungriest = max(steps, key=lambda s: s["peak_mb"], default=None)
        grown = result["table_mb"] - first["table_mb"]
        copies = max(((s["peak_mb"] - fixed.get(_name(s), leanest)) / grown, s["service"]) for s in steps) \
            if steps and grown > 0 else None
        lines.append(f"| {result['rows']:,} | {result['table_mb']} | {result['status']} | {result['seconds']} "
                     f"| {model:.1f} | {other:.1f} | {result['seconds'] - model - other:.1f} "
                     f"| {hungriest['service'] if hungriest else '—'} "
                     f"| {hungriest['peak_mb'] if hungriest else '—'} "
                     f"| {f'{copies[0]:.1f} ({copies[1]})' if copies else '—'} |")
    sizes = [result["rows"] for result in results]
    lines += ["", "| step | " + " | ".join(f"{size:,} rows: s, MB" for size in sizes) + " |",
              "|---|" + "---|" * len(sizes)]
    names = list(dict.fromkeys(_name(s) for result in results for s in result["steps"]))
    for name in names:
        cells = []
        for result in results:
            found = [s for s in result["steps"] if _name(s) == name]
            cells.append(", ".join(f"{s['seconds']} s, {s['peak_mb'] or '—'} MB"
                                   + ("" if s["status"] == StepStatus.COMPLETED else f" ({s['status']})")
                                   for s in found) or "—")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(results: list[dict], path: Path) -> None:
    """The curve on log-log axes: seconds (whole run, the model search, the other steps) and the hungriest step's MB."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    rows = [result["rows"] for result in results]
    model = [_model_seconds(r) for r in results]
    figure, (left, right) = pyplot.subplots(1, 2, figsize=(10, 4))
    left.loglog(rows, [r["seconds"] for r in results], "o-", label="time to results")
    left.loglog(rows, model, "s-", label="model search")
    left.loglog(rows, [_other_seconds(r) for r in results], "^-", label="every other step")
    left.set(xlabel="rows", ylabel="seconds", title="Time")
    left.legend()
    right.loglog(rows, [max((s["peak_mb"] or 0 for s in r["steps"]), default=0) for r in results], "o-",
                 label="hungriest step's peak")
    right.loglog(rows, [r["table_mb"] for r in results], "--", label="the table in memory")
    right.set(xlabel="rows", ylabel="MB", title="Memory")
    right.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=90)


def _name(step: dict) -> str:
    return f"{step['position']}. {step['stage']}: {step['service']}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--time-budget", type=int, help="seconds for the model search (the goal's default otherwise)")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    parser.add_argument("--plot", type=Path, help="also draw the curve into this PNG file")
    parser.add_argument("--from-json", type=Path, help="report the figures of an earlier --json instead of measuring")
    args = parser.parse_args(argv)
    results = (json.loads(args.from_json.read_text()) if args.from_json
               else measure(tuple(args.rows), args.time_budget))
    print(markdown(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    if args.plot:
        plot(results, args.plot)


if __name__ == "__main__":
    main()
