"""Correlation matrix (Pearson or Spearman) of the numeric columns of the whole dataset, target included:
the strongest pairs by absolute value go to report.md and metrics.json (``corr.<a>.<b>``), plus a heatmap PNG.
"""

import matplotlib

matplotlib.use("Agg")

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.exploration import correlation_heatmap, strongest_pairs
from dagsmith_kit.insight import analysis_table, described_columns, markdown_table


def correlate(inp, out, params):
    method = params.get("method", "pearson")
    top_n = int(params.get("top_n", 10))
    if method not in ("pearson", "spearman"):
        raise ServiceError(f"method must be 'pearson' or 'spearman', got {method!r}")
    frame = analysis_table(inp)
    numeric = frame[described_columns(inp, frame, numeric=True)].astype("float64")
    matrix, top = strongest_pairs(numeric, method, top_n)
    out.write_metrics({f"corr.{a}.{b}": float(value) for (a, b), value in top.items()})
    rows = [[a, b, float(value)] for (a, b), value in top.items()]
    out.append_report(f"## {method.title()} correlations\n\nStrongest {len(rows)} pairs by absolute value:\n\n"
                      + markdown_table(["column", "column", "correlation"], rows)
                      + f"\n\n![correlation heatmap](artifacts/correlation_{method}.png)")
    correlation_heatmap(out, matrix, f"correlation_{method}.png", f"{method.title()} correlation")


if __name__ == "__main__":
    run_service(correlate)
