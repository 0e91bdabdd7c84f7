"""The check between steps: is the bundle a step produced one the next step can use?

A violation is a step failure like any other, which self-healing handles (another service is tried).
"""

from __future__ import annotations

import json
import math

import pandas as pd

from dagsmith_kit import Bundle, BundleError
from dagsmith_kit.bundle import METRICS_FILE, PREDICTIONS_FILE


class ContractViolation(Exception):
    """The output bundle breaks the format in docs/bundle-format.md; the message lists every problem."""


def check_bundle(path, *, target: str | None, expected_outputs: list[str]) -> list[str]:
    """Problems with the bundle at ``path``; an empty list means it is fine."""
    try:
        bundle = Bundle.open(path)
    except BundleError as exc:
        return [str(exc)]
    problems = []
    tables = bundle.table_names()
    if not tables and not bundle.source_file():
        problems.append("the bundle holds no table (data, or train and test)")
    if "train" in tables and "test" not in tables:
        problems.append("a train table without a test table")
    for name in tables:
        try:
            frame = pd.read_parquet(bundle.path / f"{name}.parquet")
        except Exception as exc:  # a corrupt file is the service's fault, reported, not raised
            problems.append(f"{name}.parquet is unreadable: {exc}")
            continue
        if frame.empty:
            problems.append(f"the {name} table is empty")
        if target and target not in frame.columns:
            problems.append(f"the target column '{target}' is missing from the {name} table")
    for output in expected_outputs:
        if output.startswith(PREDICTIONS_FILE) and not (bundle.path / PREDICTIONS_FILE).is_file():
            problems.append("no predictions.parquet although the service writes one")
        if output == METRICS_FILE:
            problems += _metric_problems(bundle)
    return problems


def _metric_problems(bundle: Bundle) -> list[str]:
    file = bundle.path / METRICS_FILE
    if not file.is_file():
        return ["no metrics.json although the service writes one"]
    try:
        metrics = json.loads(file.read_text())
    except json.JSONDecodeError as exc:
        return [f"metrics.json is not valid JSON: {exc}"]
    bad = [k for k, v in metrics.items() if isinstance(v, float) and not math.isfinite(v)]
    return [f"non-finite metrics: {', '.join(bad)}"] if bad else []
