"""Read a user's table whatever its format: ``sniffing.sniff`` tells how it is stored, ``read_table`` then parses
the file once (nested values flattened, ``data.nested``), and every parser's failure becomes a ``DatasetError`` that
says where the file broke without quoting it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from itertools import islice
from pathlib import Path
from typing import Any

import pandas as pd

from dagsmith.data.encodings import BLOCK_BYTES
from dagsmith.data.nested import flattened
from dagsmith.data.sniffing import FORMAT_NAMES, SUPPORTED, DatasetError, ReadInfo, check_unique, sniff


def read_table(
    path: Path | str, *, max_rows: int | None = None, info: ReadInfo | None = None
) -> tuple[pd.DataFrame, ReadInfo]:
    """Parse ``path`` into a DataFrame (only its first ``max_rows`` rows if given) and say how it was read.

    ``info`` from an earlier ``sniff`` of the same file skips detecting again.
    """
    path = Path(path)
    info = info or sniff(path)
    with _as_dataset_error(path, info.format):
        frame = _READERS[info.format](path, info, max_rows)
    _check_shape(path, info, frame)
    frame, notes = flattened(frame)
    return frame, replace(info, notes=(*info.notes, *notes))


def read_chunks(path: Path | str, info: ReadInfo, rows: int) -> Iterator[pd.DataFrame]:
    """Delimited text in chunks of ``rows`` rows, for files too large to hold in memory at once."""
    if info.format not in ("csv", "tsv"):
        raise ValueError(f"only delimited text is read in chunks, not {info.format}")
    path = Path(path)
    with _as_dataset_error(path, info.format), pd.read_csv(path, **_csv_options(info), chunksize=rows) as reader:
        for chunk in reader:
            yield _named(chunk, info)


def count_rows(path: Path | str, info: ReadInfo) -> int | None:
    """Data rows without parsing: Parquet metadata, or a line count for text (an overestimate when quoted fields
    span lines); ``None`` for JSON and Excel, which must be parsed to be counted."""
    if info.format == "parquet":
        import pyarrow.parquet as pq

        return pq.ParquetFile(path).metadata.num_rows
    if info.format not in ("csv", "tsv", "jsonl"):
        return None
    lines, last = 0, b"\n"
    with Path(path).open("rb") as file:
        for block in iter(lambda: file.read(BLOCK_BYTES), b""):
            lines += block.count(b"\n")
            last = block.rstrip(b"\x00")[-1:]  # UTF-16 newlines carry a zero byte
    return lines + int(last != b"\n") - int(info.header and info.format != "jsonl")


def _check_shape(path: Path, info: ReadInfo, frame: pd.DataFrame) -> None:
    if len(frame) == 0 and frame.shape[1] and info.format in ("csv", "tsv", "excel"):
        raise DatasetError(
            f"'{path}' has a header row ({frame.shape[1]} columns) but no data rows. "
            f"Check that the export wrote the data, not only the column names."
        )
    if len(frame) == 0:
        raise DatasetError(f"'{path}' is {FORMAT_NAMES[info.format]} but holds no rows: there is nothing to profile.")
    if frame.shape[1] == 0:
        raise DatasetError(f"'{path}' is {FORMAT_NAMES[info.format]} but its records have no fields.")


@contextmanager
def _as_dataset_error(path: Path, fmt: str) -> Iterator[None]:
    try:
        yield
    except DatasetError:
        raise
    except Exception as exc:  # pandas, pyarrow, openpyxl and json each raise their own types; all mean "unreadable"
        raise DatasetError(
            f"'{path}' looks like {FORMAT_NAMES[fmt]} but could not be parsed: {parse_failure(exc)}. Check that the "
            f"file is complete and not corrupted, or save it again as {SUPPORTED}."
        ) from exc


#: Where a parser says it stopped, and the field counts of a ragged line, as pandas' C parser and Python's csv and
#: json modules write them.
_AT_LINE = re.compile(r"\b(?:line|row) (\d+)")
_FIELDS = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


def parse_failure(exc: Exception) -> str:
    """Why a parser refused a file, by line number and kind of problem, never quoting the file: parsers' messages
    often carry the offending text (a line, a token, a cell), which may be anything the file holds."""
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno}, column {exc.colno}"  # msg is the module's own words
    if isinstance(exc, UnicodeDecodeError):
        return f"the bytes at offset {exc.start:,} are not {exc.encoding} text"
    text = str(exc)
    if fields := _FIELDS.search(text):
        expected, line, saw = fields.groups()
        return f"line {line} has {saw} fields where the first has {expected}"
    if "EOF inside string" in text and (at := _AT_LINE.search(text)):
        return f"a quoted field opened at row {at.group(1)} is never closed"
    where = f" at line {at.group(1)}" if (at := _AT_LINE.search(text)) else ""
    return f"the parser stopped{where} ({type(exc).__name__})"


def _csv_options(info: ReadInfo) -> dict[str, Any]:
    header = 0 if info.header else None
    return {"sep": info.delimiter, "encoding": info.encoding, "decimal": info.decimal, "header": header}


def _named(frame: pd.DataFrame, info: ReadInfo) -> pd.DataFrame:
    if not info.header:
        frame.columns = [f"column_{i}" for i in range(1, frame.shape[1] + 1)]
    return frame


def _read_delimited(path: Path, info: ReadInfo, max_rows: int | None) -> pd.DataFrame:
    return _named(pd.read_csv(path, **_csv_options(info), nrows=max_rows, low_memory=False), info)


def _read_parquet(path: Path, info: ReadInfo, max_rows: int | None) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.parquet as pq

    file = pq.ParquetFile(path)
    check_unique(path, file.schema_arrow.names)
    if max_rows is None:
        return pd.read_parquet(path)
    batches = list(islice(file.iter_batches(batch_size=max_rows), 1))
    return pa.Table.from_batches(batches, schema=file.schema_arrow).to_pandas()


def _read_excel(path: Path, info: ReadInfo, max_rows: int | None) -> pd.DataFrame:
    """The first sheet; its header row is read raw first because pandas renames repeated names."""
    check_unique(path, pd.read_excel(path, header=None, nrows=1).iloc[0].tolist())
    return pd.read_excel(path, nrows=max_rows)


def _read_json(path: Path, info: ReadInfo, max_rows: int | None) -> pd.DataFrame:
    with path.open(encoding=info.encoding) as file:
        frame = _json_table(path, json.load(file))
    return frame if max_rows is None else frame.head(max_rows)


def _json_table(path: Path, data: Any) -> pd.DataFrame:
    """Records (a list of objects, possibly under one key) or columns (an object of equal-length lists)."""
    if isinstance(data, dict):
        lists = [value for value in data.values() if isinstance(value, list)]
        if data and len(lists) == len(data):
            return pd.DataFrame(data)
        if len(lists) == 1:
            data = lists[0]
    if isinstance(data, list) and all(isinstance(record, dict) for record in data):
        return pd.DataFrame.from_records(data)
    raise DatasetError(
        f"'{path}' is JSON but not a table: expected a list of records ([{{...}}, ...]), an object of equal-length "
        f"column lists, or an object with one key holding a list of records."
    )


def _read_jsonl(path: Path, info: ReadInfo, max_rows: int | None) -> pd.DataFrame:
    with path.open(encoding=info.encoding) as file:
        numbered = ((number, line) for number, line in enumerate(file, 1) if line.strip())
        records = [_json_record(path, number, line) for number, line in islice(numbered, max_rows)]
    return pd.DataFrame.from_records(records)


def _json_record(path: Path, number: int, line: str) -> dict[str, Any]:
    try:
        record = json.loads(line.strip())
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"line {number} of '{path}' is not valid JSON ({exc.msg} at column {exc.colno}); a JSON-lines file "
            f"holds one complete JSON object per line."
        ) from exc
    if not isinstance(record, dict):
        raise DatasetError(
            f"line {number} of '{path}' holds a JSON {type(record).__name__}, not an object; a JSON-lines file "
            f"holds one object (a record with named fields) per line."
        )
    return record


_READERS: dict[str, Callable[[Path, ReadInfo, int | None], pd.DataFrame]] = {
    "csv": _read_delimited, "tsv": _read_delimited, "parquet": _read_parquet, "excel": _read_excel,
    "json": _read_json, "jsonl": _read_jsonl,
}
