"""Drop rows that are duplicates once values are normalised: text compared without case, surrounding spaces
or repeated inner spaces, numbers compared after rounding to `decimals` places (None: exact).

Duplicates are judged on `subset` columns (default: every column) and removed within each table, keeping
the first. With `drop_test_overlap` (default true), test rows that duplicate a training row are removed
too, so the test set does not score the model on rows it was trained on.
"""

import pandas as pd

from dagsmith_kit import ServiceError, run_service


def normalised(frame, columns, decimals, ignore_case):
    keys = pd.DataFrame(index=frame.index)
    for column in columns:
        values = frame[column]
        if pd.api.types.is_bool_dtype(values) or pd.api.types.is_datetime64_any_dtype(values):
            keys[column] = values
        elif pd.api.types.is_numeric_dtype(values):
            values = values.astype("float64")
            keys[column] = values.round(decimals) if decimals is not None else values
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
    tables = inp.tables()
    keys = {}
    removed = {}
    for name, frame in tables.items():
        missing = sorted(set(subset or []) - set(frame.columns))
        if missing:
            raise ServiceError(f"subset names columns the '{name}' table does not have: {', '.join(missing)}")
        keys[name] = normalised(frame, subset or list(frame.columns), decimals, ignore_case)
        keep = ~keys[name].duplicated(keep="first")
        if name == "test" and drop_test_overlap:
            seen = pd.util.hash_pandas_object(keys["train"], index=False)
            keep &= ~pd.util.hash_pandas_object(keys[name], index=False).isin(seen)
        removed[name] = int((~keep).sum())
        out.write_table(name, frame[keep].reset_index(drop=True))
    out.write_metrics({f"duplicates_removed_{name}": count for name, count in removed.items()})
    out.append_report("## Normalised deduplication\n\n" + ", ".join(
        f"{name}: {count} rows removed" for name, count in removed.items()))


if __name__ == "__main__":
    run_service(deduplicate)
