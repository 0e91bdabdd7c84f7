"""Tell how a table file is stored from its first bytes, without parsing it: the extension proposes, the content
decides. Format (magic bytes, JSON shape or delimited text), encoding (``data.encodings``), delimiter, decimal mark
and header presence. Every way a file can fail to be a table ends in a ``DatasetError`` whose one-paragraph message
says what is wrong and what to do. Files above ``DAGSMITH_MAX_DATASET_BYTES`` (default 2 GiB) are refused before a
byte is read: past that size a single malformed line can take more memory than the machine has.
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
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

import pandas as pd

from dagsmith.config import ConfigurationError
from dagsmith.data.encodings import BLOCK_BYTES, detect_encoding
from dagsmith.errors import InputError
import contextlib

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
    encoding = detect_encoding(path, head)
    text = head.decode(encoding, errors="replace")
    if not text.strip():
        raise DatasetError(f"'{path}' holds only blank space: there is no table in it.")
    if size > len(head):
        text = text[: text.rfind("\n") + 1] or text  # drop the line cut off by the head limit
    structured = _json_format(path, text)
    if structured:
        return ReadInfo(structured, encoding=encoding, size_bytes=size)
    return _delimited_info(path, text, encoding, size)


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
            head = file.read(BLOCK_BYTES)
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
    named = all(_NAME.fullmatch(cell.strip()) for cell in rows[0] if cell.strip()) if rows else True
    if header and sniffed is None and not named:
        header = False  # without a delimiter, a first line is a column's name only if it reads like one
    if header and rows:
        check_unique(path, rows[0])
    return ReadInfo("tsv" if delimiter == "\t" else "csv", encoding, delimiter, header, size, decimal)


def _rows(text: str, delimiter: str) -> list[list[str]]:
    """The first rows as split by ``delimiter``, up to the first one the csv module refuses (a cell longer
    than its field limit, say): detection works on what it could read."""
    rows: list[list[str]] = []
    reader = islice(csv.reader(io.StringIO(text), delimiter=delimiter), _SNIFF_ROWS)
    with contextlib.suppress(csv.Error):
        rows.extend(row for row in reader if row)
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


def check_unique(path: Path, names: list[Any]) -> None:
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
