"""Nested values in a table (JSON records, Parquet structs and lists): struct columns become one column per field,
columns of lists or maps, which no step can use as a feature, are dropped; both said in notes for the profile."""

from __future__ import annotations

import numpy as np
import pandas as pd
from pandas.api import types as ptypes


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
