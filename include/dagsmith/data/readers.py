"""Read a user's table whatever its format: the extension proposes, the content decides.

``sniff`` tells the format, encoding, delimiter, decimal mark and header presence from the first bytes (plus one
decoding pass over text files, so a stray cp1252 byte deep in the file cannot break parsing halfway); ``read_table``
then parses the file once. Every way a file can fail to be a table ends in a ``DatasetError`` whose one-paragraph
message says what is wrong and what to do. Files above ``DAGSMITH_MAX_DATASET_BYTES`` (default 2 GiB) are refused
before a byte is read: past that size a single malformed line can take more memory than the machine has.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import os
import re
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from dagsmith.config import ConfigurationError
from dagsmith.errors import InputError

SUPPORTED = "CSV, TSV, Parquet, JSON, JSON lines or Excel (.xlsx)"
FORMAT_NAMES = {
    "csv": "delimited text (CSV)", "tsv": "tab-separated text (TSV)", "parquet": "Parquet", "json": "JSON",
    "jsonl": "JSON lines", "excel": "an Excel workbook",
}
#: File extensions and the formats they usually hold (the content decides: a file is read by what it holds).
EXTENSIONS = {
    ".csv": "csv", ".txt": "csv", ".dat": "csv", ".tsv": "tsv", ".tab": "tsv", ".parquet": "parquet", ".pq": "parquet",
    ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".xlsx": "excel", ".xlsm": "excel", ".xls": "excel",
}
_DELIMITERS = (",", ";", "\t", "|")
_HEAD_BYTES = 1 << 20
_BINARY_PROBE = 64 * 1024
_SNIFF_ROWS = 50
#: Control bytes that never occur in text tables (tab, newlines and form feed are allowed).
_CONTROL_BYTES = bytes(b for b in range(32) if b not in b"\t\n\r\f")
_NOT_TABLES = {
    b"%PDF": "a PDF document", b"\x89PNG": "a PNG image", b"\xff\xd8\xff": "a JPEG image", b"GIF8": "a GIF image",
    b"\x1f\x8b": "a gzip archive", b"BZh": "a bzip2 archive", b"7z\xbc\xaf": "a 7-Zip archive",
    b"\x7fELF": "a program", b"SQLite format 3": "an SQLite database",
}
#: What a column's name looks like, for a file without a delimiter: a system file read by mistake ('root:x:0:0:',
#: 'KEY=secret', '-----BEGIN ...') starts with no such line, so its first line is data, never named in a message.
_NAME = re.compile(r"\w[\w .,()%/#&+'\[\]-]{0,99}")
_DECIMAL_COMMA = re.compile(r"[-+]?\d+,\d+")
_DECIMAL_POINT = re.compile(r"[-+]?\d+\.\d+")
#: Mostly utf-8 with stray cp1252 bytes: an encoding registered below, so pandas and ``open`` read such files.
MIXED_ENCODING = "utf-8+cp1252"
_CP1252_FALLBACK = "dagsmith-cp1252"
_UTF8_SEQUENCE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")
_ASCII = bytes(range(128))
#: How JSON text starts: an object with a string key (or empty), or an array of values.
_JSON_START = re.compile(r'\{\s*["}]|\[\s*(?:[\[{"\]\-0-9]|true|false|null)')
MAX_BYTES_VARIABLE = "DAGSMITH_MAX_DATASET_BYTES"
DEFAULT_MAX_BYTES = 2 * 1024**3


class DatasetError(InputError, ValueError):
    """A file that cannot be read as a table; the message says why and what to do, in one paragraph."""


@dataclass(frozen=True)
class ReadInfo:
    """How a file was read: enough to read it again (in chunks, say) the same way."""

    format: str
    encoding: str | None = None
    delimiter: str | None = None
    header: bool = True
    size_bytes: int = 0
    decimal: str = "."
    #: What reading changed, for the profile's notes: nested columns flattened or dropped.
    notes: tuple[str, ...] = ()


def sniff(path: Path | str) -> ReadInfo:
    """Detect how ``path`` is stored without parsing it; raises ``DatasetError`` when it cannot be a table."""
    path = Path(path)
    head, size = file_head(path)
    binary = _binary_format(path, head)
    if binary:
        return ReadInfo(binary, size_bytes=size)
    encoding = _encoding(path, head)
    text = head.decode(encoding, errors="replace")
    if not text.strip():
        raise DatasetError(f"'{path}' holds only blank space: there is no table in it.")
    if size > len(head):
        text = text[: text.rfind("\n") + 1] or text  # drop the line cut off by the head limit
    structured = _json_format(path, text)
    if structured:
        return ReadInfo(structured, encoding=encoding, size_bytes=size)
    return _delimited_info(path, text, encoding, size)


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
        for block in iter(lambda: file.read(_HEAD_BYTES), b""):
            lines += block.count(b"\n")
            last = block.rstrip(b"\x00")[-1:]  # UTF-16 newlines carry a zero byte
    return lines + int(last != b"\n") - int(info.header and info.format != "jsonl")


def max_dataset_bytes() -> int:
    """The largest file read, from ``DAGSMITH_MAX_DATASET_BYTES`` (a positive number of bytes)."""
    value = os.environ.get(MAX_BYTES_VARIABLE) or str(DEFAULT_MAX_BYTES)
    if not value.isdecimal() or int(value) == 0:
        raise ConfigurationError(f"{MAX_BYTES_VARIABLE} must be a positive whole number of bytes, not '{value}'")
    return int(value)


def size_text(count: int) -> str:
    """'2,147,483,649 bytes (2.0 GiB)': exact, and readable."""
    power, unit = next(((p, u) for p, u in ((3, "GiB"), (2, "MiB"), (1, "KiB")) if count >= 1024**p), (0, ""))
    return f"{count:,} bytes" + (f" ({count / 1024**power:.1f} {unit})" if unit else "")


# ---------------------------------------------------------------- detection
def file_head(path: Path) -> tuple[bytes, int]:
    """The first MiB of a readable, regular file within the size limit, and its size; else a ``DatasetError``."""
    if not path.exists():
        raise DatasetError(
            f"'{path}' does not exist. Check the spelling and the directory (relative paths start from {Path.cwd()})."
        )
    if path.is_dir():
        raise DatasetError(f"'{path}' is a directory, not a file. Point at one table file inside it: {SUPPORTED}.")
    if not path.is_file():  # a named pipe would block the read forever, a device never ends
        raise DatasetError(f"'{path}' is not a regular file (a named pipe, a device or a socket). Save the table to a "
                           f"file first: {SUPPORTED}.")
    try:
        size, limit = path.stat().st_size, max_dataset_bytes()
        if size > limit:
            raise DatasetError(
                f"'{path}' is {size_text(size)}, over the limit of {size_text(limit)} set by {MAX_BYTES_VARIABLE}. "
                f"Use a sample or a subset of its columns, or raise the limit on a machine with the memory for it."
            )
        with path.open("rb") as file:
            head = file.read(_HEAD_BYTES)
    except OSError as exc:
        raise DatasetError(f"cannot open '{path}': {exc.strerror or exc}. Check that this user may read it.") from exc
    if not head:
        raise DatasetError(f"'{path}' is empty (0 bytes): there is no table in it. Was it written completely?")
    return head, size


def _binary_format(path: Path, head: bytes) -> str | None:
    """'parquet' or 'excel' from the magic bytes, None for text; raises for any other binary file."""
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith(b"\xd0\xcf\x11\xe0"):  # legacy .xls (OLE2 compound document)
        return "excel"
    if head.startswith(b"PK\x03\x04"):
        if is_workbook(path):
            return "excel"
        raise DatasetError(
            f"'{path}' is a ZIP archive but not an Excel workbook. Extract the table inside it and use that file "
            f"({SUPPORTED})."
        )
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return None
    probe = head[:_BINARY_PROBE]
    controls = len(probe) - len(probe.translate(None, _CONTROL_BYTES))
    if b"\x00" in probe or controls > 0.05 * len(probe):
        kind = next((name for magic, name in _NOT_TABLES.items() if head.startswith(magic)), "binary data")
        raise DatasetError(
            f"'{path}' cannot be read as a table: it holds {kind}, not text, Parquet or Excel. "
            f"Export the data as {SUPPORTED} and try again."
        )
    return None


def is_workbook(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as archive:
            return "xl/workbook.xml" in archive.namelist()
    except zipfile.BadZipFile:
        return False


def _encoding(path: Path, head: bytes) -> str:
    """A byte-order mark decides; otherwise utf-8 if it decodes the whole file, utf-8 with cp1252 for the odd line
    when the file is mostly utf-8 (rows appended by another program), else cp1252, else latin-1."""
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    if _decodes(path, "utf-8"):
        return "utf-8"
    sequences, stray = _utf8_evidence(path)
    if sequences > stray:
        return MIXED_ENCODING
    return "cp1252" if _decodes(path, "cp1252") else "latin-1"  # latin-1 decodes any byte sequence


def _utf8_evidence(path: Path) -> tuple[int, int]:
    """How many utf-8 multi-byte characters the file holds, and how many non-ASCII bytes outside them."""
    sequences = stray = 0
    with path.open("rb") as file:
        for block in iter(lambda: file.read(_HEAD_BYTES), b""):
            found = _UTF8_SEQUENCE.findall(block)
            sequences += len(found)
            stray += len(block.translate(None, _ASCII)) - sum(map(len, found))
    return sequences, stray


def _as_cp1252(error: UnicodeError) -> tuple[str, int]:
    """Bytes that are not utf-8, read as cp1252 (as latin-1 for the five bytes cp1252 leaves undefined)."""
    stray = error.object[error.start:error.end]
    return "".join(bytes([byte]).decode("cp1252", errors="ignore") or chr(byte) for byte in stray), error.end


class _MixedDecoder(codecs.BufferedIncrementalDecoder):
    def _buffer_decode(self, data: bytes, errors: str, final: bool) -> tuple[str, int]:
        return codecs.utf_8_decode(data, _CP1252_FALLBACK, final)


def _mixed_codec(name: str) -> codecs.CodecInfo | None:
    if name != re.sub(r"\W", "_", MIXED_ENCODING):  # the name as codecs.lookup normalises it
        return None
    return codecs.CodecInfo(
        name=MIXED_ENCODING, encode=codecs.utf_8_encode, incrementalencoder=codecs.getincrementalencoder("utf-8"),
        decode=lambda data, errors="strict": codecs.utf_8_decode(data, _CP1252_FALLBACK, True),
        incrementaldecoder=_MixedDecoder,
    )


codecs.register_error(_CP1252_FALLBACK, _as_cp1252)
codecs.register(_mixed_codec)


def _decodes(path: Path, encoding: str) -> bool:
    decoder = codecs.getincrementaldecoder(encoding)()
    try:
        with path.open("rb") as file:
            for block in iter(lambda: file.read(_HEAD_BYTES), b""):
                decoder.decode(block)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def _json_format(path: Path, text: str) -> str | None:
    """'json' or 'jsonl' when the content is JSON-shaped: one object per line makes JSON lines."""
    stripped = text.lstrip()
    if not _JSON_START.match(stripped):  # a header such as '[unit],price' is a table's, not JSON
        return None
    if stripped.startswith("["):
        return "json"
    lines = [line for line in stripped.splitlines() if line.strip()]
    try:
        json.loads(lines[0])
    except ValueError:
        return "json"  # a pretty-printed object spans several lines
    several = len(lines) > 1 and lines[1].lstrip().startswith("{")
    return "jsonl" if several or EXTENSIONS.get(path.suffix.lower()) == "jsonl" else "json"


def _delimited_info(path: Path, text: str, encoding: str, size: int) -> ReadInfo:
    extension = EXTENSIONS.get(path.suffix.lower())
    sniffed = delimiter = _sniff_delimiter(text)
    if delimiter is None:
        if extension not in ("csv", "tsv"):
            raise DatasetError(
                f"cannot tell what format '{path}' is: the extension '{path.suffix or '(none)'}' does not say, and "
                f"the content is text without a consistent delimiter (comma, semicolon, tab or bar), JSON, Parquet "
                f"or Excel. Save the table as {SUPPORTED}."
            )
        delimiter = "\t" if extension == "tsv" else ","
    rows = _rows(text, delimiter)
    decimal = _decimal_mark(rows, delimiter)
    header = _has_header(rows, decimal)
    if header and rows and sniffed is None and not all(_NAME.fullmatch(cell.strip()) for cell in rows[0] if cell.strip()):
        header = False  # without a delimiter, a first line is a column's name only if it reads like one
    if header and rows:
        _check_unique(path, rows[0])
    return ReadInfo("tsv" if delimiter == "\t" else "csv", encoding, delimiter, header, size, decimal)


def _rows(text: str, delimiter: str) -> list[list[str]]:
    """The first rows as split by ``delimiter``, up to the first one the csv module refuses (a cell longer
    than its field limit, say): detection works on what it could read."""
    rows: list[list[str]] = []
    reader = islice(csv.reader(io.StringIO(text), delimiter=delimiter), _SNIFF_ROWS)
    try:
        rows.extend(row for row in reader if row)
    except csv.Error:
        pass
    return rows


def _sniff_delimiter(text: str) -> str | None:
    """The delimiter that splits the first rows into the same number (at least 2) of fields most consistently."""
    best, best_key = None, (0.8, 1)  # at least 80% of the rows must agree on the width
    for delimiter in _DELIMITERS:
        widths = [len(row) for row in _rows(text, delimiter)]
        if not widths:
            continue
        width, agreeing = Counter(widths).most_common(1)[0]
        key = (agreeing / len(widths), width)
        if width > 1 and key > best_key:
            best, best_key = delimiter, key
    return best


def _decimal_mark(rows: list[list[str]], delimiter: str) -> str:
    """',' when numbers like 3,14 outnumber 3.14 (European exports, which are never comma-delimited)."""
    if delimiter == ",":
        return "."
    cells = [cell.strip() for row in rows[1:] for cell in row]
    commas = sum(bool(_DECIMAL_COMMA.fullmatch(cell)) for cell in cells)
    points = sum(bool(_DECIMAL_POINT.fullmatch(cell)) for cell in cells)
    return "," if commas > points else "."


def _is_number(cell: str, decimal: str) -> bool:
    try:
        float(cell.replace(decimal, "."))
    except ValueError:
        return False
    return True


def _has_header(rows: list[list[str]], decimal: str) -> bool:
    """The first row is a header unless it looks like data: numbers atop numeric columns, or values that recur below.

    Each column votes; without evidence either way (all text, nothing repeated) a header is assumed, as most files
    have one.
    """
    if len(rows) < 2:
        return True
    first, body = rows[0], rows[1:]
    votes = 0
    for index, cell in enumerate(first):
        below = [row[index] for row in body if index < len(row) and row[index]]
        if not below:
            continue
        if sum(_is_number(value, decimal) for value in below) >= 0.9 * len(below):
            votes += -1 if _is_number(cell, decimal) else 1
        elif cell in below:
            votes -= 1
    return votes >= 0


def _check_unique(path: Path, names: list[Any]) -> None:
    """Repeated column names make columns indistinguishable (pandas would silently rename them 'a.1'). The columns
    are named by position: a refusal quotes nothing of the file."""
    positions: dict[str, list[int]] = {}
    for position, name in enumerate(names, 1):
        if not pd.isna(name) and str(name).strip():
            positions.setdefault(str(name), []).append(position)
    repeated = [found for found in positions.values() if len(found) > 1]
    if repeated:
        listed = "; ".join(" and ".join(map(str, found)) for found in repeated)
        raise DatasetError(
            f"'{path}' has duplicate column names: the columns at positions {listed} (counting from 1) have the same "
            f"name. Every column needs its own name to be told apart; rename the repeats and try again."
        )


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


# ---------------------------------------------------------------- nested values
def flattened(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Struct (object) columns become one column per field, named ``address.city``; columns holding lists, arrays
    or maps, which no step can use as a feature, are dropped. Both are said in the returned notes."""
    notes: list[str] = []
    structs = {name: _fields(frame[name]) for name in _nested(frame, "struct")}
    if structs:
        notes.append(f"Nested fields became columns: {_listed(structs)}.")
        frame = pd.concat([structs.get(name, frame[[name]]) for name in frame.columns], axis=1)
    lists = _nested(frame, "list")
    if lists:
        held = "holds lists or maps" if len(lists) == 1 else "hold lists or maps"
        notes.append(f"Dropped {', '.join(map(repr, lists))}: {held}, which cannot be used as features.")
        frame = frame.drop(columns=lists)
    return frame, notes


def _nested(frame: pd.DataFrame, kind: str) -> list[str]:
    return [name for name in frame.columns if frame[name].dtype == object and nesting(frame[name]) == kind]


#: Values that hold other values: a column of them is nested (a struct or a list per row).
CONTAINERS = (dict, list, tuple, set, np.ndarray)


def nesting(series: pd.Series) -> str | None:
    """'struct' when every value is a mapping of fields, 'list' when any is a list, array, map or mixed container."""
    values = series.dropna()
    if values.empty or ptypes.infer_dtype(values, skipna=True) not in ("mixed", "empty"):
        return None
    containers = values.map(lambda value: isinstance(value, CONTAINERS))
    if not containers.any():
        return None
    return "struct" if values.map(lambda value: isinstance(value, dict)).all() else "list"


def _fields(series: pd.Series) -> pd.DataFrame:
    records = [value if isinstance(value, dict) else {} for value in series]
    fields = pd.json_normalize(records)
    fields.columns = [f"{series.name}.{field}" for field in fields.columns]
    fields.index = series.index
    return fields


def _listed(fields: dict[str, pd.DataFrame]) -> str:
    def names(part: pd.DataFrame) -> str:
        more = f" and {part.shape[1] - 4} more" if part.shape[1] > 4 else ""
        return ", ".join(map(repr, part.columns[:4])) + more

    return "; ".join(f"'{name}' into {names(part)}" for name, part in fields.items())


# ---------------------------------------------------------------- parsing
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
    _check_unique(path, file.schema_arrow.names)
    if max_rows is None:
        return pd.read_parquet(path)
    batches = list(islice(file.iter_batches(batch_size=max_rows), 1))
    return pa.Table.from_batches(batches, schema=file.schema_arrow).to_pandas()


def _read_excel(path: Path, info: ReadInfo, max_rows: int | None) -> pd.DataFrame:
    """The first sheet; its header row is read raw first because pandas renames repeated names."""
    _check_unique(path, pd.read_excel(path, header=None, nrows=1).iloc[0].tolist())
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
