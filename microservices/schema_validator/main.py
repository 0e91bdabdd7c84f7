"""Validate the data before modelling: not empty, enough rows, target present and filled, no empty columns.

Writes a validation section to report.md and n_rows / n_columns / missing_ratio metrics; a failed
blocking check stops the pipeline with a clear error.
"""

import pandas as pd

from dagsmith_kit import run_service
from dagsmith_kit.cleaning import checks_table, stop_on_failed_checks


def validate(inp, out, params):
    min_rows = int(params.get("min_rows", 10))
    max_missing_warning = float(params.get("max_missing_warning", 0.5))
    frame = pd.concat(list(inp.tables().values()), ignore_index=True)
    target = inp.target
    empty_columns = [c for c in frame.columns if frame[c].isna().all()] if len(frame) else []
    checks = [  # (name, passed, blocking, detail)
        ("table not empty", len(frame) > 0 and frame.shape[1] > 0, True, f"{frame.shape[0]} x {frame.shape[1]}"),
        (f"at least {min_rows} rows", len(frame) >= min_rows, True, f"{len(frame)} rows"),
        ("no fully empty columns", not empty_columns, True, ", ".join(empty_columns) or "none"),
        ("id columns present", set(inp.id_columns) <= set(frame.columns), True, ", ".join(inp.id_columns) or "none"),
    ]
    if target:
        present = target in frame.columns
        checks.append(("target present", present, True, target))
        if present:
            n_missing = int(frame[target].isna().sum())
            checks.append(("target not all missing", n_missing < len(frame), True, f"{n_missing} missing"))
            checks.append(("target has no missing values", n_missing == 0, False, f"{n_missing} missing"))
    column_missing = frame.isna().mean() if len(frame) else pd.Series(dtype=float)
    sparse = [str(c) for c in column_missing[column_missing > max_missing_warning].index]
    checks.append((f"no column over {max_missing_warning:.0%} missing", not sparse, False, ", ".join(sparse) or "none"))
    n_duplicates = int(frame.duplicated().sum()) if len(frame) else 0
    checks.append(("no duplicated rows", n_duplicates == 0, False, f"{n_duplicates} duplicated"))

    missing_ratio = float(frame.isna().to_numpy().mean()) if frame.size else 0.0
    table, warnings = checks_table(checks)
    out.append_report(f"## Data validation\n\n{table}\n\nOverall missing ratio: {missing_ratio:.2%}")
    out.write_metrics({"n_rows": len(frame), "n_columns": frame.shape[1], "missing_ratio": missing_ratio,
                       "validation_warnings": warnings})
    stop_on_failed_checks(checks, "data")

if __name__ == "__main__":
    run_service(validate)
