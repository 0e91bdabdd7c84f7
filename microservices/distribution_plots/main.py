"""Plot the distribution of each column of the whole dataset in one PNG grid: a histogram per numeric
column and a bar chart of the most frequent values per other column (up to ``max_columns`` panels).
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dagsmith_kit import ServiceError, run_service  # noqa: E402
from dagsmith_kit.insight import analysis_table, described_columns, grid_shape, is_numeric, save_figure  # noqa: E402


def plot_distributions(inp, out, params):
    max_columns = int(params.get("max_columns", 16))
    bins = int(params.get("bins", 30))
    max_categories = int(params.get("max_categories", 12))
    frame = analysis_table(inp)
    columns = described_columns(inp, frame)[:max_columns]
    columns = [c for c in columns if frame[c].notna().any()]
    if not columns:
        raise ServiceError("the table has no non-empty columns to plot")
    rows, cols = grid_shape(len(columns))
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False)
    for ax, column in zip(axes.flat, columns):
        series = frame[column].dropna()
        if is_numeric(series):
            ax.hist(series.astype("float64"), bins=bins, color="steelblue", edgecolor="white")
        else:
            counts = series.astype(str).value_counts().head(max_categories)
            ax.bar(np.arange(len(counts)), counts.to_numpy(), color="darkorange")
            ax.set_xticks(np.arange(len(counts)), counts.index, rotation=45, ha="right", fontsize=7)
        ax.set_title(str(column), fontsize=9)
    for ax in list(axes.flat)[len(columns):]:
        ax.set_visible(False)
    save_figure(out, fig, "distributions.png")
    out.append_report(f"## Distributions\n\n{len(columns)} columns plotted."
                      "\n\n![distributions](artifacts/distributions.png)")


if __name__ == "__main__":
    run_service(plot_distributions)
