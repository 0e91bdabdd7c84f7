"""Drop rows that are duplicates once values are normalised: text compared without case, surrounding spaces
or repeated inner spaces, numbers compared after rounding to `decimals` places (None: exact).

Normalising only forgives how a value was written, never what it says: identifier columns (the bundle's
`id_columns`) always take part and are compared exactly, so two records are never merged; a column is rounded
to more places than `decimals` when fewer would merge values that differ beyond representation noise (a
relative 1e-6), so different measurements stay different rows.

Duplicates are judged on `subset` columns (default: every column) and removed within each table, keeping
the first. With `drop_test_overlap` (default true), test rows that duplicate a training row are removed
too, so the test set does not score the model on rows it was trained on.
"""

import numpy as np
import pandas as pd

from dagsmith_kit import ServiceError, run_service

#: Numbers closer than this (relative to their size, at least 1) differ only in how they were written.
NOISE = 1e-6
MAX_DECIMALS = 12


def places(values, decimals):
    """The fewest places from `decimals` on at which rounding merges only values within representation noise."""
    known = values.dropna()
    for n in range(decimals, MAX_DECIMALS + 1):
        groups = known.groupby(known.round(n))
        spread = groups.transform("max") - groups.transform("min")
        if (spread <= NOISE * np.maximum(known.abs(), 1.0)).all():
            return n
    return None


def normalised(frame, columns, rounding, ignore_case, identifiers):
    keys = pd.DataFrame(index=frame.index)
    for column in columns:
        values = frame[column]
        if column in identifiers or pd.api.types.is_bool_dtype(values) or pd.api.types.is_datetime64_any_dtype(values):
            keys[column] = values
        elif pd.api.types.is_numeric_dtype(values):
            values = values.astype("float64")
            keys[column] = values.round(rounding[column]) if rounding.get(column) is not None else values
        else:
            text = values.astype("string").str.strip().str.replace(r"\s+", " ", regex=True)
            keys[column] = text.str.casefold() if ignore_case else text
    return keys


def deduplicate(inp, out, params):
    subset = params.get("subset", None)
    decimals = params.get("decimals", None)
    ignore_case = bool(params.get("ignore_case", True))
    drop_test_overlap = bool(params.get("drop_test_overlap", True))
    if isinstance(subset, str):
        subset = [subset]
    if decimals is not None:
        decimals = int(decimals)
        if decimals < 0:
            raise ServiceError(f"decimals must be 0 or more (or null for exact numbers), got {decimals}")
    tables = inp.tables()
    for name, frame in tables.items():
        missing = sorted(set(subset or []) - set(frame.columns))
        if missing:
            raise ServiceError(f"subset names columns the '{name}' table does not have: {', '.join(missing)}")
    first = next(iter(tables.values()))
    identifiers = {c for c in inp.id_columns if c in first.columns}
    columns = list(dict.fromkeys([*(subset or first.columns), *sorted(identifiers)]))
    numbers = [c for c in columns if c not in identifiers and pd.api.types.is_numeric_dtype(first[c])
               and not pd.api.types.is_bool_dtype(first[c])]
    rounding = {} if decimals is None else {  # one rounding for every table, so train and test rows compare
        c: places(pd.concat([frame[c] for frame in tables.values()]).astype("float64"), decimals) for c in numbers}
    keys = {}
    removed = {}
    for name, frame in tables.items():
        keys[name] = normalised(frame, columns, rounding, ignore_case, identifiers)
        keep = ~keys[name].duplicated(keep="first")
        if name == "test" and drop_test_overlap:
            seen = pd.util.hash_pandas_object(keys["train"], index=False)
            keep &= ~pd.util.hash_pandas_object(keys[name], index=False).isin(seen)
        removed[name] = int((~keep).sum())
        out.write_table(name, frame[keep].reset_index(drop=True))
    out.write_metrics({f"duplicates_removed_{name}": count for name, count in removed.items()})
    kept_apart = "".join(f"\n- {column} compared " + (f"at {n} places" if n is not None else "exactly")
                         + f": {decimals} would merge different values"
                         for column, n in rounding.items() if n != decimals)
    out.append_report("## Normalised deduplication\n\n" + ", ".join(
        f"{name}: {count} rows removed" for name, count in removed.items()) + kept_apart)


if __name__ == "__main__":
    run_service(deduplicate)
