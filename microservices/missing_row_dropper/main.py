"""Drop rows with missing values, table by table: rows missing the target, and rows whose share of missing
feature values exceeds `max_missing_fraction` (0 drops any row with a missing feature).
"""

import pandas as pd

from dagsmith_kit import ServiceError, run_service


def drop_rows(inp, out, params):
    max_missing_fraction = float(params.get("max_missing_fraction", 0.0))
    if not 0.0 <= max_missing_fraction < 1.0:
        raise ServiceError(f"max_missing_fraction must be in [0, 1), got {max_missing_fraction}")
    removed = {}
    for name, frame in inp.tables().items():
        features = inp.feature_columns(frame)
        keep = pd.Series(True, index=frame.index)
        if features:
            keep &= frame[features].isna().mean(axis=1) <= max_missing_fraction
        if inp.target in frame.columns:
            keep &= frame[inp.target].notna()
        if not keep.any():
            raise ServiceError(f"every row of the '{name}' table has missing values; impute instead of dropping")
        removed[name] = int((~keep).sum())
        out.write_table(name, frame[keep].reset_index(drop=True))
    out.write_metrics({f"rows_dropped_{name}": count for name, count in removed.items()})
    summary = ", ".join(f"{name}: {count} rows dropped" for name, count in removed.items())
    out.append_report("## Rows with missing values\n\n" + summary)


if __name__ == "__main__":
    run_service(drop_rows)
