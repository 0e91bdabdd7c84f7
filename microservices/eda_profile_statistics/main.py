"""Profile every column of the whole dataset (data, or train and test together): count, missing values,
mean, std, min, quartiles and max for numeric columns; cardinality and most frequent value for the others.

Writes ``stat.<column>.<statistic>`` to metrics.json and a Markdown table to report.md; the data is unchanged.
"""

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import analysis_table, described_columns, finite_metrics, is_numeric, markdown_table

QUANTILES = {"q25": 0.25, "median": 0.5, "q75": 0.75}


def numeric_stats(series):
    stats = {"count": series.count(), "missing": series.isna().sum(), "mean": series.mean(),
             "std": series.std(ddof=1), "min": series.min()}
    stats.update({name: series.quantile(q) for name, q in QUANTILES.items()})
    stats["max"] = series.max()
    return stats


def profile(inp, out, params):
    include_target = bool(params.get("include_target", True))
    top_n = int(params.get("top_n", 3))
    frame = analysis_table(inp)
    columns = [c for c in described_columns(inp, frame) if include_target or c != inp.target]
    if not columns:
        raise ServiceError("the table has no columns to profile")
    metrics = {"stat.rows": len(frame), "stat.columns": len(columns)}
    numeric_rows, other_rows = [], []
    for column in columns:
        series = frame[column]
        if is_numeric(series):
            stats = numeric_stats(series.astype("float64"))
            numeric_rows.append([column, *stats.values()])
        else:
            counts = series.astype(object).value_counts(dropna=True)
            stats = {"count": series.count(), "missing": series.isna().sum(), "unique": series.nunique(dropna=True),
                     "top_freq": counts.iloc[0] if len(counts) else 0}
            top = ", ".join(f"{value} ({n})" for value, n in counts.head(top_n).items())
            other_rows.append([column, stats["count"], stats["missing"], stats["unique"], top])
        metrics.update({f"stat.{column}.{name}": value for name, value in stats.items()})
    out.write_metrics(finite_metrics(metrics))
    report = [f"## Data profile\n\n{len(frame)} rows, {len(columns)} columns profiled."]
    if numeric_rows:
        report.append("### Numeric columns\n\n" + markdown_table(
            ["column", "count", "missing", "mean", "std", "min", "25%", "50%", "75%", "max"], numeric_rows))
    if other_rows:
        report.append("### Other columns\n\n" + markdown_table(
            ["column", "count", "missing", "unique", "most frequent"], other_rows))
    out.append_report("\n\n".join(report))


if __name__ == "__main__":
    run_service(profile)
