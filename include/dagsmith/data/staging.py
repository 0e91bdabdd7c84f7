"""The dataset as a pipeline's loader step reads it: the table its plan was made from, in a file any loader opens."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dagsmith.data.compression import decompressed
from dagsmith.data.readers import read_table
from dagsmith.data.sniffing import ReadInfo, sniff
from dagsmith.scratch import scratch_folder

_NESTABLE = ("parquet", "json", "jsonl")


@contextmanager
def loadable(path: Path | str) -> Iterator[Path]:
    """``path`` decompressed and, when its table holds nested columns, rewritten with them flattened as the profile
    saw them (Parquet stays Parquet; JSON becomes JSON lines), so the loader sees the columns the plan names."""
    with decompressed(path) as plain:
        info = sniff(plain)
        if info.format not in _NESTABLE or not _may_nest(plain, info):
            yield plain
            return
        frame, info = read_table(plain, info=info)
        if not info.notes:
            yield plain
            return
        with scratch_folder("dagsmith-flattened-") as directory:
            if info.format == "parquet":
                flat = directory / f"{plain.stem}.parquet"
                frame.to_parquet(flat, index=False)
            else:
                flat = directory / f"{plain.stem}.jsonl"
                frame.to_json(flat, orient="records", lines=True, date_format="iso", force_ascii=False)
            yield flat


def _may_nest(path: Path, info: ReadInfo) -> bool:
    """Parquet says so in its schema, without reading the data; JSON must be parsed to tell."""
    if info.format != "parquet":
        return True
    import pyarrow as pa
    import pyarrow.parquet as pq

    return any(pa.types.is_nested(field.type) for field in pq.read_schema(path))
