"""Correlation matrix (Pearson or Spearman) of the numeric columns of the whole dataset, target included:
the strongest pairs by absolute value go to report.md and metrics.json (``corr.<a>.<b>``), plus a heatmap PNG.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dagsmith_kit import ServiceError, run_service  # noqa: E402
from dagsmith_kit.insight import analysis_table, described_columns, markdown_table, save_figure  # noqa: E402


def correlate(inp, out, params):
    method = params.get("method", "pearson")
    top_n = int(params.get("top_n", 10))
    if method not in ("pearson", "spearman"):
        raise ServiceError(f"method must be 'pearson' or 'spearman', got {method!r}")
    frame = analysis_table(inp)
    numeric = frame[described_columns(inp, frame, numeric=True)].astype("float64")
    numeric = numeric.loc[:, numeric.std() > 0]
    if numeric.shape[1] < 2:
        raise ServiceError("correlation needs at least two numeric, non-constant columns")
    matrix = numeric.corr(method=method)
    upper = matrix.where(np.triu(np.ones(matrix.shape, dtype=bool), k=1)).stack().dropna()
    top = upper.reindex(upper.abs().sort_values(ascending=False).index).head(top_n)
    out.write_metrics({f"corr.{a}.{b}": float(value) for (a, b), value in top.items()})
    rows = [[a, b, float(value)] for (a, b), value in top.items()]
    out.append_report(f"## {method.title()} correlations\n\nStrongest {len(rows)} pairs by absolute value:\n\n"
                      + markdown_table(["column", "column", "correlation"], rows)
                      + f"\n\n![correlation heatmap](artifacts/correlation_{method}.png)")
    size = min(4 + 0.35 * len(matrix), 20)
    fig, ax = plt.subplots(figsize=(size + 1.5, size))
    image = ax.imshow(matrix.to_numpy(), cmap="coolwarm", vmin=-1, vmax=1)
    ax.set_xticks(range(len(matrix)), matrix.columns, rotation=90, fontsize=7)
    ax.set_yticks(range(len(matrix)), matrix.columns, fontsize=7)
    ax.set_title(f"{method.title()} correlation")
    fig.colorbar(image, ax=ax, shrink=0.8)
    save_figure(out, fig, f"correlation_{method}.png")


if __name__ == "__main__":
    run_service(correlate)
