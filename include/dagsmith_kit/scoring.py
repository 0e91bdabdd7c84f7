"""Score new rows with a model version: check them against its schema, replay its preprocessing, apply its model.

    python -m dagsmith_kit.scoring --model VERSION_DIR --input NEW.parquet --output OUT_DIR [--chunk-rows N]
                                   [--after-step N] [--ahead]

``--ahead`` scores, instead of the input's rows, those a forecast's feature step says come after its data.

This unpickles what services wrote (the transforms, the model), so it runs inside the sandbox like a service; dagsmith
itself never imports it. Rows are read, prepared and predicted in chunks, so memory stays bounded whatever the number
of rows. The version folder and the outputs are documented in docs/bundle-format.md ("Model versions").
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from dagsmith_kit import drift, transforms
from dagsmith_kit.bundle import ENSEMBLE_FILE, MEMBERS_DIR, MODEL_FILE, MODEL_INFO_FILE, PREDICTIONS_FILE, BundleError
from dagsmith_kit.frames import with_columns
from dagsmith_kit.freeze import REFERENCE_FILE, SCHEMA_FILE
from dagsmith_kit.service import ServiceError

SCORING_FILE = "scoring.json"
CHUNK_ROWS = 50_000
#: example values named when a column's type changed.
EXAMPLES = 3


def _read_json(path: Path) -> Any:
    if not path.is_file():
        raise ServiceError(f"{path.parent} is not a model version: {path.name} is missing")
    return json.loads(path.read_text(encoding="utf-8"))


# ---------------------------------------------------------------- checking new rows against the schema
def _fits(kind: str, arrow_type: pa.DataType) -> bool:
    """Whether a column of ``arrow_type`` can hold values of a training column of ``kind``."""
    if pa.types.is_null(arrow_type) or kind in ("categorical", "text"):
        return True
    if pa.types.is_dictionary(arrow_type):
        arrow_type = arrow_type.value_type
    numeric = pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type) or pa.types.is_decimal(arrow_type)
    if kind == "numeric":
        return numeric or pa.types.is_boolean(arrow_type)
    if kind == "boolean":
        return pa.types.is_boolean(arrow_type) or numeric
    if kind == "datetime":
        return pa.types.is_timestamp(arrow_type) or pa.types.is_date(arrow_type)
    return True


#: a training column's kind, in words.
KIND_WORDS = {"numeric": "numbers", "boolean": "true/false values", "datetime": "dates"}


def _in_words(arrow_type: pa.DataType) -> str:
    if pa.types.is_dictionary(arrow_type):
        arrow_type = arrow_type.value_type
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return "text"
    if pa.types.is_boolean(arrow_type):
        return KIND_WORDS["boolean"]
    if pa.types.is_temporal(arrow_type):
        return KIND_WORDS["datetime"]
    return KIND_WORDS["numeric"] if pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type) else str(
        arrow_type)


def _examples(parquet: pq.ParquetFile, column: str) -> str:
    values = next(parquet.iter_batches(batch_size=1000, columns=[column])).column(0).drop_null().to_pylist()
    return ", ".join(repr(v) for v in list(dict.fromkeys(values))[:EXAMPLES])


def check_schema(schema: dict[str, Any], parquet: pq.ParquetFile) -> dict[str, Any]:
    """Refuse new rows missing a feature or holding one of another type (naming it); note the extra columns."""
    arrow = parquet.schema_arrow
    present = set(arrow.names)
    features = schema["features"]
    missing = [f["name"] for f in features if f["name"] not in present]
    if missing:
        raise ServiceError(f"the new rows have no column {', '.join(missing[:10])}"
                           + (f" and {len(missing) - 10} more" if len(missing) > 10 else "") + ": the model needs it")
    for feature in features:
        arrow_type = arrow.field(feature["name"]).type
        if not _fits(feature["kind"], arrow_type):
            raise ServiceError(f"column {feature['name']} held {KIND_WORDS[feature['kind']]} in training but holds "
                               f"{_in_words(arrow_type)} now (e.g. {_examples(parquet, feature['name'])})")
    known = {f["name"] for f in features} | set(schema["id_columns"]) | {schema.get("target")}
    return {"extra_columns": [c for c in arrow.names if c not in known],
            "missing_id_columns": [c for c in schema["id_columns"] if c not in present]}


def unusual_values(features: list[dict[str, Any]], frame: pd.DataFrame) -> tuple[dict[str, int], dict[str, int]]:
    """Per column, how many values are categories training never saw, and how many numbers lie outside its range."""
    unseen, out_of_range = {}, {}
    for feature in features:
        values = frame[feature["name"]].dropna()
        if "categories" in feature:
            unseen[feature["name"]] = int((~values.astype(str).isin(feature["categories"])).sum())
        elif feature["kind"] == "numeric" and feature.get("min") is not None:
            numbers = pd.to_numeric(values, errors="coerce")
            out_of_range[feature["name"]] = int(((numbers < feature["min"]) | (numbers > feature["max"])).sum())
    return unseen, out_of_range


# ---------------------------------------------------------------- the model
def load_model(version: Path, info: dict[str, Any]) -> Any:
    if (version / ENSEMBLE_FILE).is_file():
        from dagsmith_kit import ensemble

        return ensemble.load(version / ENSEMBLE_FILE, version / MEMBERS_DIR)
    import joblib

    return joblib.load(version / MODEL_FILE)


def predict(model: Any, info: dict[str, Any], X: pd.DataFrame) -> pd.DataFrame:
    """The model's output columns for the prepared rows ``X``, as predictions.parquet names them."""
    kind = info.get("kind")
    if kind == "clustering":
        return pd.DataFrame({"cluster": np.asarray(model.predict(X), dtype=int)})
    if kind == "anomaly":
        scores = np.asarray(model.score(X), dtype=float)
        flags = scores >= float(info["anomaly_threshold"])
        why = np.full(len(scores), "", dtype=object)
        why[flags] = model.why(X, np.flatnonzero(flags))
        return pd.DataFrame({"anomaly_score": scores, "is_anomaly": flags, "why": why})
    from dagsmith_kit.supervised import prediction_frame

    return prediction_frame(model, X, info.get("classes") if kind == "classifier" else None)


# ---------------------------------------------------------------- scoring
def prepare(frame: pd.DataFrame, loaded: list, target: str | None) -> pd.DataFrame:
    """New rows after the recorded transforms. Rows without the target get it as an empty column while the
    transforms run (a transform of the target, such as a type fix, passes over it), and lose it after."""
    if not target or target in frame.columns:
        return transforms.replay(frame, loaded)
    return transforms.replay(with_columns(frame, {target: np.nan}), loaded).drop(columns=[target], errors="ignore")


def score(version: Path, source: Path, output: Path, chunk_rows: int = CHUNK_ROWS,
          after_step: int = 0, shown: list[str] | None = None) -> dict[str, Any]:
    """Score the rows of ``source`` with the model version in ``version``; write predictions and a summary to
    ``output``, each prediction beside the row's ``shown`` columns (default its id columns). Nothing is left in
    ``output`` when it fails.

    ``after_step`` > 0 says the rows are a run's own, as its step ``after_step`` wrote them (a split's held-out
    rows): only the transforms of later steps are replayed, and the checks of raw rows against the training
    schema (types, unusual values, drift) do not apply to them."""
    started = time.monotonic()
    schema = _read_json(version / SCHEMA_FILE)
    reference = _read_json(version / REFERENCE_FILE)
    info = _read_json(version / MODEL_INFO_FILE)
    blocked = {**info, **schema.get("model", {})}
    if blocked.get("can_score") is False:
        raise ServiceError(f"this model cannot score new rows: {blocked.get('reason')}")
    if chunk_rows < 1:
        raise ServiceError(f"--chunk-rows must be at least 1, got {chunk_rows}")
    try:
        parquet = pq.ParquetFile(source)
    except (OSError, pa.ArrowException) as exc:
        raise ServiceError(f"{source.name} is not a readable Parquet file ({exc})") from None
    raw = after_step == 0
    notes = check_schema(schema, parquet) if raw else {}
    try:
        loaded = transforms.load(version, after_step)
    except ValueError as exc:
        raise ServiceError(str(exc)) from None
    model = load_model(version, info)
    loaded_after = round(time.monotonic() - started, 3)
    features = [f["name"] for f in schema["features"]]
    ids = [c for c in schema["id_columns"] if c in parquet.schema_arrow.names]
    shown = [c for c in shown if c in parquet.schema_arrow.names] if shown is not None else ids
    target = schema.get("target")
    read = (list(dict.fromkeys([*shown, *ids, *features, *([target] if target in parquet.schema_arrow.names else [])]))
            if raw else None)
    model_features = info.get("features") or []
    summary: dict[str, Any] = {"rows_scored": 0, "chunks": 0, **notes, "unseen_categories": {}, "out_of_range": {}}
    counted: dict[str, Any] = {}
    created = not output.exists()
    output.mkdir(parents=True, exist_ok=True)
    partial = output / f".{PREDICTIONS_FILE}.partial"
    writer = None
    try:
        for batch in parquet.iter_batches(batch_size=chunk_rows, columns=read):
            frame = batch.to_pandas()
            if raw:
                unseen, out_of_range = unusual_values(schema["features"], frame)
                for totals, more in ((summary["unseen_categories"], unseen), (summary["out_of_range"], out_of_range)):
                    for column, count in more.items():
                        totals[column] = totals.get(column, 0) + count
                counted = drift.add(counted, drift.counts(reference, frame))
            try:
                prepared = prepare(frame, loaded, target)
                X = prepared[model_features] if model_features else prepared.drop(columns=[*ids, target],
                                                                                  errors="ignore")
                predicted = predict(model, info, X)
            except (ValueError, KeyError, TypeError) as exc:  # e.g. missing values a training step dropped rows for
                first = summary["rows_scored"]
                raise ServiceError(f"rows {first} to {first + len(frame) - 1} could not be scored: "
                                   f"{' '.join(str(exc).split())}") from None
            result = pa.Table.from_pandas(pd.concat([frame[shown].reset_index(drop=True),
                                                     predicted.reset_index(drop=True)], axis=1), preserve_index=False)
            if writer is None:
                writer = pq.ParquetWriter(partial, result.schema)
            writer.write_table(result.cast(writer.schema))
            summary["rows_scored"] += len(frame)
            summary["chunks"] += 1
        if writer is None:
            raise ServiceError(f"{source.name} holds no rows to score")
        writer.close()
        writer = None
        summary["drift"] = drift.judge(reference, counted) if raw else None
        summary["seconds"] = round(time.monotonic() - started, 3)
        summary["load_seconds"] = loaded_after  # of which: checks, unpickling the transforms and the model
        summary["model"] = {k: info[k] for k in ("kind", "anomaly_threshold") if k in info}
        os.replace(partial, output / PREDICTIONS_FILE)
        (output / SCORING_FILE).write_text(json.dumps(summary, indent=2), encoding="utf-8")
    except BaseException:
        if writer is not None:
            writer.close()
        partial.unlink(missing_ok=True)
        if created:
            output.rmdir()
        raise
    return summary


def score_ahead(version: Path, output: Path) -> dict[str, Any]:
    """Score the rows a forecast's step makes of the times past the data it learnt from (``transforms.ahead_rows``),
    each prediction beside its series keys and time: the forecast itself."""
    rows = transforms.ahead_rows(version)
    if rows is None or rows.empty:
        raise ServiceError("no step of this model says which rows come after the data: it makes no forecast ahead")
    output.mkdir(parents=True, exist_ok=True)
    source = output / ".ahead-rows.parquet"
    try:
        rows.to_parquet(source, index=False)
        return score(version, source, output, shown=list(rows.columns))
    finally:
        source.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Score new rows with a dagsmith model version.")
    parser.add_argument("--model", required=True, help="the model version folder")
    parser.add_argument("--input", required=True, help="the new rows (Parquet)")
    parser.add_argument("--output", required=True, help="folder for predictions.parquet and scoring.json")
    parser.add_argument("--chunk-rows", type=int, default=CHUNK_ROWS, help="rows prepared and predicted at once")
    parser.add_argument("--after-step", type=int, default=0,
                        help="the rows are a run's own as its step N wrote them: replay only the later steps")
    parser.add_argument("--ahead", action="store_true",
                        help="score the rows past the known data that a forecast's step makes, not --input's")
    args = parser.parse_args(argv)
    try:
        if args.ahead:
            score_ahead(Path(args.model), Path(args.output))
        else:
            score(Path(args.model), Path(args.input), Path(args.output), args.chunk_rows, args.after_step)
    except (ServiceError, BundleError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
