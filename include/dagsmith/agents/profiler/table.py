"""The table as the profiler holds it: every row when it fits in memory, always a sample for the expensive parts;
large delimited files are streamed in chunks, with exact counts and moments from one pass."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dagsmith.agents.profiler.common import is_numeric, ratio
from dagsmith.data.nested import CONTAINERS, nesting
from dagsmith.data.readers import count_rows, read_chunks
from dagsmith.data.sniffing import DatasetError, ReadInfo
from dagsmith.models.profile import ColumnProfile
from dagsmith_kit.frames import with_columns

CHUNK_ROWS = 250_000


@dataclass
class _Moments:
    """Count, missing, mean, variance and range of one column, merged chunk by chunk (Chan et al.'s update)."""

    rows: int = 0
    count: int = 0
    numeric: bool = True
    n: int = 0
    mean: float = 0.0
    m2: float = 0.0
    low: float = math.inf
    high: float = -math.inf

    def add(self, series: pd.Series) -> None:
        present = int(series.count())
        self.rows += len(series)
        self.count += present
        if not is_numeric(series):
            self.numeric = self.numeric and present == 0  # an all-missing chunk says nothing about the type
            return
        values = series.dropna().astype(float)
        if values.empty:
            return
        n, mean = len(values), float(values.mean())
        delta, total = mean - self.mean, self.n + n
        self.m2 += float(((values - mean) ** 2).sum()) + delta**2 * self.n * n / total
        self.mean += delta * n / total
        self.n = total
        self.low, self.high = min(self.low, float(values.min())), max(self.high, float(values.max()))

    def apply(self, column: ColumnProfile) -> None:
        """Replace the sample's counts (and moments, for a column numeric in every chunk) with the full pass's."""
        column.count, column.missing = self.count, self.rows - self.count
        column.missing_ratio = ratio(column.missing, self.rows)
        if self.numeric and self.n and column.mean is not None:
            column.mean, column.min, column.max = self.mean, self.low, self.high
            column.std = math.sqrt(self.m2 / (self.n - 1)) if self.n > 1 else None


@dataclass
class Table:
    """All rows when they fit in memory (``full``), always a sample for the expensive parts."""

    sample: pd.DataFrame
    full: pd.DataFrame | None
    n_rows: int
    moments: dict[str, _Moments] = field(default_factory=dict)


def profilable(frame: pd.DataFrame) -> pd.DataFrame:
    """String column names, no repeats, at least one cell; nested JSON values as text so they can be counted."""
    if frame.empty:
        raise DatasetError(f"the table has {len(frame)} rows and {frame.shape[1]} columns: nothing to profile.")
    frame = frame.rename(columns=str)
    repeated = np.flatnonzero(frame.columns.duplicated(keep=False)) + 1  # by position: a refusal quotes no data
    if len(repeated):
        raise DatasetError(f"the table has duplicate column names (the columns at positions "
                           f"{', '.join(map(str, repeated))}, counting from 1); rename them.")
    nested = [name for name in frame.columns if frame[name].dtype == object and nesting(frame[name])]
    return with_columns(frame, {name: frame[name].map(_as_json) for name in nested}) if nested else frame


def _as_json(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        value = value.tolist()
    return json.dumps(value, default=str, sort_keys=True) if isinstance(value, CONTAINERS) else value


def streamed(path: Path, info: ReadInfo, sample_rows: int) -> Table:
    """One pass over a large delimited file: full-pass moments per column and a proportional random sample."""
    fraction = min(1.0, sample_rows / max(count_rows(path, info) or 1, 1))
    rng = np.random.default_rng(0)
    moments: dict[str, _Moments] = {}
    parts = []
    for chunk in read_chunks(path, info, CHUNK_ROWS):
        for name in chunk.columns:
            moments.setdefault(name, _Moments()).add(chunk[name])
        parts.append(chunk.sample(frac=fraction, random_state=rng))
    sample = profilable(pd.concat(parts, ignore_index=True))
    return Table(sample=sample, full=None, n_rows=next(iter(moments.values())).rows, moments=moments)
