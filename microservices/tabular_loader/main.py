"""Load the bundle's raw source file (CSV, TSV, JSON, JSON lines, Parquet or Excel) into data.parquet.

Detects the text encoding and the delimiter of delimited text files; `sheet` picks an Excel sheet by name or
position (default the first).
"""

import csv
import io

import pandas as pd

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.cleaning import require_source, write_loaded

ENCODINGS = ("utf-8-sig", "cp1252", "latin-1")


def read_text(raw, encoding):
    for candidate in ([encoding] if encoding else ENCODINGS):
        try:
            return raw.decode(candidate)
        except UnicodeDecodeError:
            continue
    raise ServiceError(f"could not decode the file with any of: {', '.join(ENCODINGS)}")


def load(inp, out, params):
    source = require_source(inp)
    suffix = source.suffix.lower()
    if suffix in (".parquet", ".pq"):
        frame = pd.read_parquet(source)
    elif suffix in (".xlsx", ".xlsm"):
        sheet = params.get("sheet", None)  # a name or a position (0 is the first)
        try:
            frame = pd.read_excel(source, sheet_name=0 if sheet is None else sheet)
        except (ValueError, IndexError) as exc:
            raise ServiceError(f"cannot read sheet {sheet!r} of the workbook: {exc}") from None
    elif suffix in (".json", ".jsonl", ".ndjson"):
        text = read_text(source.read_bytes(), params.get("encoding", None))
        try:
            frame = pd.read_json(io.StringIO(text), lines=suffix != ".json")
        except ValueError:  # a .json file holding one record per line
            frame = pd.read_json(io.StringIO(text), lines=True)
    elif suffix in (".csv", ".tsv", ".tab", ".txt", ".dat"):
        text = read_text(source.read_bytes(), params.get("encoding", None))
        delimiter = params.get("delimiter", None)
        if delimiter is None:
            try:
                delimiter = csv.Sniffer().sniff("\n".join(text.splitlines()[:50]), delimiters=",;\t|").delimiter
            except csv.Error:
                delimiter = "\t" if suffix in (".tsv", ".tab") else ","
        frame = pd.read_csv(io.StringIO(text), sep=delimiter)
    else:
        raise ServiceError(f"unsupported source format '{suffix}' (CSV, TSV, JSON, JSON lines, Parquet, Excel)")
    write_loaded(inp, out, frame, inp.meta.get("source_name") or source.name)


if __name__ == "__main__":
    run_service(load)
