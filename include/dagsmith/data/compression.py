"""Compressed tables: gzip, bzip2 and xz files and one-table zip archives are read through a decompressed copy.

The copy is written in blocks and counted as it grows: past ``DAGSMITH_MAX_DATASET_BYTES`` decompression stops and
the file is refused, so a small archive that expands to terabytes (a "zip bomb") costs at most the limit in disk
and never the machine's memory. Errors about the copy name the file the user gave, not the temporary one.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import IO

from dagsmith.data.sniffing import DatasetError, file_head, is_workbook, max_dataset_bytes, size_text
from dagsmith.scratch import scratch_folder

_STREAMS: dict[str, tuple[bytes, Callable[[Path], IO[bytes]]]] = {
    "gzip": (b"\x1f\x8b", partial(gzip.open, mode="rb")),
    "bzip2": (b"BZh", partial(bz2.open, mode="rb")),
    "xz": (b"\xfd7zXZ\x00", partial(lzma.open, mode="rb")),
}
_COMPRESSED_SUFFIXES = {".gz", ".gzip", ".bz2", ".xz", ".zip"}
_WORKBOOK_SUFFIXES = {".xlsx", ".xlsm"}  # a damaged workbook is reported as one, not as an odd archive
_BLOCK = 1 << 20


def compression(path: Path | str) -> str | None:
    """'gzip', 'bzip2', 'xz' or 'zip' from the file's first bytes; None for anything else (an Excel workbook is a
    zip archive too, but not a compressed table)."""
    path = Path(path)
    head, _ = file_head(path)
    for name, (magic, _) in _STREAMS.items():
        if head.startswith(magic):
            return name
    if head.startswith(b"PK\x03\x04") and path.suffix.lower() not in _WORKBOOK_SUFFIXES and not is_workbook(path):
        return "zip"
    return None


@contextmanager
def decompressed(path: Path | str) -> Iterator[Path]:
    """``path`` itself when it is not compressed; otherwise a temporary decompressed copy, removed on exit.

    The copy keeps the inner file's name (``sales.csv`` from ``sales.csv.gz`` or from the archive's member), so
    its extension still proposes the format.
    """
    path = Path(path)
    kind = compression(path)
    if kind is None:
        yield path
        return
    with scratch_folder("dagsmith-decompressed-") as directory:
        copy = directory / _inner_name(path, kind)
        _expand(path, kind, copy)
        try:
            yield copy
        except DatasetError as exc:
            raise DatasetError(str(exc).replace(f"'{copy}'", f"'{path}' (decompressed)")) from exc


def _inner_name(path: Path, kind: str) -> str:
    if kind == "zip":
        return Path(_member(path).filename).name
    stem = path.stem if path.suffix.lower() in _COMPRESSED_SUFFIXES else path.name
    return stem or "table"


def _member(path: Path) -> zipfile.ZipInfo:
    """The archive's one file; macOS metadata folders do not count."""
    try:
        with zipfile.ZipFile(path) as archive:
            files = [m for m in archive.infolist() if not m.is_dir() and not m.filename.startswith("__MACOSX/")]
    except zipfile.BadZipFile as exc:
        raise DatasetError(f"'{path}' is a zip archive but could not be opened: {exc}. Check that it was copied "
                           f"completely.") from exc
    if len(files) != 1:
        listed = ", ".join(f"'{m.filename}'" for m in files[:5]) + (", ..." if len(files) > 5 else "")
        raise DatasetError(
            f"'{path}' is a zip archive holding {len(files)} files{': ' + listed if files else ''}. dagsmith reads an "
            f"archive that holds one table; extract the one you mean and use that file."
        )
    return files[0]


@contextmanager
def _stream(path: Path, kind: str) -> Iterator[IO[bytes]]:
    if kind != "zip":
        with _STREAMS[kind][1](path) as stream:
            yield stream
        return
    member = _member(path)
    with zipfile.ZipFile(path) as archive, archive.open(member) as stream:
        yield stream


def _expand(path: Path, kind: str, copy: Path) -> None:
    limit, written = max_dataset_bytes(), 0
    try:
        with _stream(path, kind) as source, copy.open("wb") as target:
            for block in iter(lambda: source.read(_BLOCK), b""):
                written += len(block)
                if written > limit:
                    raise DatasetError(
                        f"'{path}' decompresses to more than {size_text(limit)}, the limit set by "
                        f"DAGSMITH_MAX_DATASET_BYTES; decompression stopped there. Use a sample or a subset of its "
                        f"columns, or raise the limit on a machine with the memory for it."
                    )
                target.write(block)
    except (OSError, EOFError, lzma.LZMAError, zipfile.BadZipFile) as exc:
        if isinstance(exc, OSError) and exc.errno is not None:  # the disk, not the archive
            raise DatasetError(f"cannot decompress '{path}': {exc.strerror}. Free some space in "
                               f"{copy.parent.parent} or decompress it elsewhere.") from exc
        raise DatasetError(
            f"'{path}' is {kind}-compressed but could not be decompressed ({exc}). Check that the file was copied "
            f"completely, or decompress it yourself and use the table inside."
        ) from exc
    if written == 0:
        raise DatasetError(f"'{path}' is {kind}-compressed but holds nothing: there is no table in it.")

