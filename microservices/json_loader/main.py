"""Load a JSON or JSON-lines source file into data.parquet, flattening nested objects into columns.

{"user": {"age": 31}} becomes a column `user.age` (the separator is `sep`) down to `max_level` levels;
lists and anything nested deeper are kept as JSON text. A top-level object holding the records under one
key ({"data": [...]}) is unwrapped, or `record_key` names that key. Other formats are refused.
"""

import json

import pandas as pd

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.cleaning import require_source, write_loaded

SUFFIXES = (".json", ".jsonl", ".ndjson")


def records_of(document, record_key):
    if isinstance(document, list):
        return document
    if not isinstance(document, dict):
        raise ServiceError("the JSON document holds a single value, not records")
    if record_key is not None:
        if not isinstance(document.get(record_key), list):
            raise ServiceError(f"record_key '{record_key}' does not name a list of records in the document")
        return document[record_key]
    lists = [key for key, value in document.items() if isinstance(value, list)]
    if len(lists) == 1:
        return document[lists[0]]
    if lists:
        raise ServiceError(f"the document holds several lists ({', '.join(lists[:5])}); set record_key")
    return [document]


def as_text(value):
    return json.dumps(value, ensure_ascii=False) if isinstance(value, (list, dict)) else value


def load(inp, out, params):
    max_level = params.get("max_level", None)
    sep = str(params.get("sep", "."))
    record_key = params.get("record_key", None)
    source = require_source(inp)
    suffix = source.suffix.lower()
    if suffix not in SUFFIXES:
        raise ServiceError(f"json_loader reads JSON and JSON-lines files only ({', '.join(SUFFIXES)}), "
                           f"got a '{suffix}' file")
    try:
        text = source.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ServiceError(f"the JSON file is not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    if suffix == ".json":
        try:
            records = records_of(json.loads(text), record_key)
        except json.JSONDecodeError as exc:
            raise ServiceError(f"the file is not valid JSON: {exc}") from None
    else:
        records = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ServiceError(f"line {number} of the JSON-lines file is not valid JSON: {exc}") from None
    if not all(isinstance(record, dict) for record in records):
        raise ServiceError("every record must be a JSON object (found arrays or plain values)")
    frame = pd.json_normalize(records, sep=sep, max_level=None if max_level is None else int(max_level))
    nested = [c for c in frame.columns if frame[c].map(lambda v: isinstance(v, (list, dict))).any()]
    for column in nested:
        frame[column] = frame[column].map(as_text)
    write_loaded(inp, out, frame, inp.meta.get("source_name") or source.name)
    out.write_metrics({"nested_columns_as_text": len(nested)})


if __name__ == "__main__":
    run_service(load)
