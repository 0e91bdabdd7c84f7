"""``dagsmith predict``: new rows scored by a version of a pipeline's model, the predictions written beside them.

The rows are read with the readers training uses (a file they cannot read is an ``InputError``), staged as Parquet
in the run's scratch and scored by the sandboxed scoring step; the predictions file is written whole or not at all,
and each scoring is recorded (``scoring_runs``) with its drift per feature.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from dagsmith.config import Settings
from dagsmith.data.compression import decompressed
from dagsmith.data.readers import read_table
from dagsmith.errors import InputError
from dagsmith.registry import versions
from dagsmith.registry.scoring import drifted, score
from dagsmith.runtime import runtime_named
from dagsmith.store import schema
from dagsmith.store.db import session_scope

OUTPUT_FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


def default_output(data: Path) -> Path:
    """``<name>.predictions.csv`` beside the input (``.parquet`` for a Parquet input)."""
    stem = data.name.split(".")[0] or "rows"
    return data.with_name(f"{stem}.predictions.{'parquet' if data.suffix.lower() == '.parquet' else 'csv'}")


def predict(pipeline_id: int, data: Path, *, out: Path | None, number: int | None, runtime: str, user: str | None,
            settings: Settings) -> dict[str, Any]:
    """Score ``data`` with version ``number`` (default: the champion) of the pipeline; the summary."""
    if not data.is_file():
        raise InputError(f"the dataset {data} does not exist")
    out = (out or default_output(data)).resolve()
    if out.suffix.lower() not in OUTPUT_FORMATS:
        raise InputError(f"--out {out.name}: the predictions are written as CSV or Parquet; name a .csv or .parquet "
                         "file")
    if out == data.resolve():
        raise InputError(f"--out {out} is the input itself; name another file")
    with session_scope(settings) as session:
        pipeline = session.get(schema.Pipeline, pipeline_id)
        if pipeline is None:
            raise InputError(f"no pipeline {pipeline_id}; `dagsmith pipelines list` shows them")
        row = versions.find(session, pipeline_id, number)
        version_id, number, status, path = row.id, row.version, row.status, Path(row.path)
        user = user or pipeline.owner
    with decompressed(data) as plain:
        rows, _ = read_table(plain)
    scored = score(path, rows, runtime=runtime_named(runtime, settings), settings=settings)
    _write(scored.predictions, out)
    over = drifted(scored.report, settings.drift_threshold)
    report = scored.report
    with session_scope(settings) as session:
        session.add(schema.ScoringRun(version_id=version_id, owner=user, dataset=str(data.resolve()), output=str(out),
                                      rows=int(report.get("rows_scored", len(scored.predictions))), report=report,
                                      drifted=list(over)))
    return {"pipeline_id": pipeline_id, "version": number, "status": status, "dataset": str(data.resolve()),
            "output": str(out),
            "rows": int(report.get("rows_scored", len(scored.predictions))),
            "extra_columns": report.get("extra_columns", []),
            "unseen_categories": _counted(report.get("unseen_categories")),
            "out_of_range": _counted(report.get("out_of_range")),
            "drift_threshold": settings.drift_threshold, "drifted": over,
            "drift": {c: v.get("psi") for c, v in ((report.get("drift") or {}).get("columns") or {}).items()}}


def _counted(counts: dict[str, int] | None) -> dict[str, int]:
    """The columns with at least one such value."""
    return {column: count for column, count in (counts or {}).items() if count}


def _write(predictions, out: Path) -> None:
    """The predictions at ``out``, whole or not at all (written beside it, then renamed into place)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.partial")
    try:
        if OUTPUT_FORMATS[out.suffix.lower()] == "csv":
            predictions.to_csv(partial, index=False)
        else:
            predictions.to_parquet(partial, index=False)
        os.replace(partial, out)
    finally:
        partial.unlink(missing_ok=True)
