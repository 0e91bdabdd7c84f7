"""Count outliers in each numeric column of the whole dataset with two rules: outside the Tukey fences
(Q1 - k*IQR, Q3 + k*IQR) and |z-score| above a threshold. Reports only: the data is not changed.
"""

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import analysis_table, described_columns, markdown_table


def report_outliers(inp, out, params):
    iqr_factor = float(params.get("iqr_factor", 1.5))
    z_threshold = float(params.get("z_threshold", 3.0))
    include_target = bool(params.get("include_target", False))
    if iqr_factor <= 0 or z_threshold <= 0:
        raise ServiceError("iqr_factor and z_threshold must be positive")
    frame = analysis_table(inp)
    columns = [c for c in described_columns(inp, frame, numeric=True) if include_target or c != inp.target]
    if not columns:
        raise ServiceError("the table has no numeric columns to check for outliers")
    metrics, rows = {}, []
    for column in columns:
        values = frame[column].astype("float64").dropna()
        q1, q3 = values.quantile(0.25), values.quantile(0.75)
        low, high = q1 - iqr_factor * (q3 - q1), q3 + iqr_factor * (q3 - q1)
        iqr_count = int(((values < low) | (values > high)).sum())
        std = values.std(ddof=1)
        z_count = int(((values - values.mean()).abs() > z_threshold * std).sum()) if std > 0 else 0
        metrics[f"outliers.{column}.iqr"] = iqr_count
        metrics[f"outliers.{column}.zscore"] = z_count
        rows.append([column, len(values), iqr_count, z_count, float(low), float(high)])
    metrics["outliers.total_iqr"] = sum(row[2] for row in rows)
    metrics["outliers.total_zscore"] = sum(row[3] for row in rows)
    out.write_metrics(metrics)
    out.append_report(f"## Outliers\n\nIQR rule with k={iqr_factor:g}; z-score rule with |z| > {z_threshold:g}.\n\n"
                      + markdown_table(["column", "values", "IQR outliers", "z outliers", "lower fence",
                                        "upper fence"], rows))


if __name__ == "__main__":
    run_service(report_outliers)
