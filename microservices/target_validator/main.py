"""Validate the target before any model is trained, and stop the pipeline when it cannot be learned.

Classification: at least two classes, every class with at least `min_class_rows` training rows, no missing
labels in training. Regression: a numeric target with at least `min_distinct` distinct values and no missing
values in training. A class imbalance above `max_imbalance` (majority / minority) is a warning only.
Writes target metrics and a validation table to report.md; the data passes on unchanged.
"""

import pandas as pd

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.cleaning import checks_table, stop_on_failed_checks
from dagsmith_kit.features import supervised_task


def label_checks(labels, min_class_rows, max_imbalance):
    counts = labels.value_counts()
    imbalance = float(counts.max() / counts.min()) if len(counts) else float("inf")
    smallest = f"{counts.index[-1]!s}: {counts.iloc[-1]} rows" if len(counts) else "no labels"
    metrics = {"n_classes": len(counts), "imbalance_ratio": imbalance,
               "minority_class_share": float(counts.min() / counts.sum()) if len(counts) else 0.0}
    checks = [
        ("at least two classes", len(counts) >= 2, True, f"{len(counts)} classes"),
        (f"every class has at least {min_class_rows} rows", counts.min() >= min_class_rows if len(counts) else False,
         True, smallest),
        (f"imbalance at most {max_imbalance:g}:1", imbalance <= max_imbalance, False, f"{imbalance:.1f}:1"),
    ]
    return checks, metrics


def numeric_target_checks(values, min_distinct):
    numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
    distinct = int(values.nunique())
    checks = [
        ("target is numeric", numeric, True, str(values.dtype)),
        (f"at least {min_distinct} distinct values", distinct >= min_distinct, True, f"{distinct} distinct"),
    ]
    metrics = {"target_distinct_values": distinct}
    if numeric and distinct:
        metrics.update({"target_mean": float(values.mean()), "target_std": float(values.std()),
                        "target_skew": float(values.skew())})
    return checks, metrics


def validate_target(inp, out, params):
    min_class_rows = int(params.get("min_class_rows", 5))
    max_imbalance = float(params.get("max_imbalance", 20.0))
    min_distinct = int(params.get("min_distinct", 10))
    task = supervised_task(inp, "target_validator")
    target = inp.require_target()
    train = inp.fit_table()
    if target not in train.columns:
        raise ServiceError(f"target validation failed: the target column '{target}' is not in the table")
    labels = train[target]
    n_missing = int(labels.isna().sum())
    if task == "classification":
        checks, metrics = label_checks(labels.dropna(), min_class_rows, max_imbalance)
    else:
        checks, metrics = numeric_target_checks(labels.dropna(), min_distinct)
    checks.insert(0, ("no missing target values", n_missing == 0, True, f"{n_missing} missing"))
    table, warnings = checks_table(checks)
    out.append_report(f"## Target validation\n\nTarget `{target}` ({task}).\n\n{table}")
    out.write_metrics({**metrics, "target_missing": n_missing, "target_warnings": warnings})
    stop_on_failed_checks(checks, "target")

if __name__ == "__main__":
    run_service(validate_target)
