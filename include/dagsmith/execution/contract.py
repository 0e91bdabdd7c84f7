"""The check between steps: is the bundle a step produced one the next step can use?

A violation is a step failure like any other, which self-healing handles (another service is tried).
"""

from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path

import numpy as np
import pandas as pd

from dagsmith_kit import Bundle, BundleError
from dagsmith_kit.bundle import METRICS_FILE, PREDICTIONS_FILE, TABLE_NAMES


def _links_and_special_files(path: Path) -> list[str]:
    """Entries of an output that are neither plain files nor folders: a service's link to a host file would be read
    by the worker (checks, reports, the next step's staging) with the worker's rights."""
    if not path.is_dir() or path.is_symlink():
        return []
    found = []
    for folder, subfolders, names in os.walk(path):  # links to folders are listed, never entered
        for name in [*subfolders, *names]:
            entry = Path(folder, name)
            mode = entry.lstat().st_mode
            if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
                found.append(str(entry.relative_to(path)))
    return sorted(found)


def check_bundle(path, *, target: str | None, expected_outputs: list[str], source: Path | None = None) -> list[str]:
    """Problems with the bundle at ``path``; an empty list means it is fine.

    With ``source`` (the step's input bundle), numeric columns that were complete there and now hold
    gaps count as a problem too: a transformer that turns numbers into NaN is numerically unstable.
    """
    foreign = _links_and_special_files(Path(path))
    if foreign:  # checked before anything is opened: the worker would follow a link wherever it points
        return [f"the output holds links or special files ({', '.join(foreign[:5])}); a bundle holds plain files"]
    try:
        bundle = Bundle.open(path)
    except BundleError as exc:
        return [str(exc)]
    problems = []
    tables = bundle.table_names()
    frames = {}
    complete_before = _complete_numeric(source)
    if not tables and not bundle.source_file():
        problems.append("the bundle holds no table (data, or train and test)")
    if "train" in tables and "test" not in tables:
        problems.append("a train table without a test table")
    for name in tables:
        try:
            frame = pd.read_parquet(bundle.path / f"{name}.parquet")
        except Exception as exc:  # noqa: BLE001 - a corrupt file is the service's fault, reported, not raised
            problems.append(f"{name}.parquet is unreadable: {exc}")
            continue
        frames[name] = frame
        if frame.empty:
            problems.append(f"the {name} table is empty")
        if target and target not in frame.columns:
            problems.append(f"the target column '{target}' is missing from the {name} table")
        # a table the input did not have yet (train/test after a split) compares with the input's whole table
        problems += _non_finite_problems(name, frame, complete_before.get(name, complete_before.get("data", set())))
    if (bundle.path / PREDICTIONS_FILE).is_file():
        problems += _prediction_problems(bundle, frames)
    for output in expected_outputs:
        if output.startswith(PREDICTIONS_FILE) and not (bundle.path / PREDICTIONS_FILE).is_file():
            problems.append("no predictions.parquet although the service writes one")
        if output == METRICS_FILE:
            problems += _metric_problems(bundle)
    return problems


def _complete_numeric(source: Path | None) -> dict[str, set[str]]:
    """Per table of the input bundle, its numeric columns without gaps (each input table read once)."""
    if source is None:
        return {}
    complete = {}
    for file in Path(source).glob("*.parquet"):
        if file.stem in TABLE_NAMES:
            frame = pd.read_parquet(file)
            complete[file.stem] = {c for c in frame.columns
                                   if pd.api.types.is_numeric_dtype(frame[c]) and not frame[c].isna().any()}
    return complete


def _non_finite_problems(name: str, frame: pd.DataFrame, complete_before: set[str]) -> list[str]:
    numeric = frame.select_dtypes("number")
    infinite = [c for c in numeric.columns if np.isinf(numeric[c].to_numpy(dtype=float)).any()]
    gaps = [c for c in numeric.columns if c in complete_before and numeric[c].isna().any()]
    problems = []
    if infinite:
        problems.append(f"non-finite values (infinity) in the {name} table: {', '.join(infinite[:10])}")
    if gaps:
        problems.append(f"non-finite values (NaN) introduced in the {name} table: {', '.join(gaps[:10])}")
    return problems


def _prediction_problems(bundle: Bundle, frames: dict[str, pd.DataFrame]) -> list[str]:
    """Predictions must line up with the table they predict: ``test`` after a split, ``data`` before."""
    try:
        predictions = pd.read_parquet(bundle.path / PREDICTIONS_FILE)
    except Exception as exc:  # noqa: BLE001 - a corrupt file is the service's fault, reported, not raised
        return [f"{PREDICTIONS_FILE} is unreadable: {exc}"]
    table = "test" if "test" in frames else "data"
    if table in frames and len(predictions) != len(frames[table]):
        return [f"{len(predictions)} predictions for {len(frames[table])} rows of the {table} table"]
    return []


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
