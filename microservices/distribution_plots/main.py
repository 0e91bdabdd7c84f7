"""Plot the distribution of each column of the whole dataset in one PNG grid: a histogram per numeric
column and a bar chart of the most frequent values per other column (up to ``max_columns`` panels).
"""

import matplotlib

matplotlib.use("Agg")

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.exploration import distribution_grid
from dagsmith_kit.insight import analysis_table, described_columns


def plot_distributions(inp, out, params):
    max_columns = int(params.get("max_columns", 16))
    bins = int(params.get("bins", 30))
    max_categories = int(params.get("max_categories", 12))
    frame = analysis_table(inp)
    columns = described_columns(inp, frame)[:max_columns]
    columns = [c for c in columns if frame[c].notna().any()]
    if not columns:
        raise ServiceError("the table has no non-empty columns to plot")
    distribution_grid(out, frame, columns, bins=bins, max_categories=max_categories)
    out.append_report(f"## Distributions\n\n{len(columns)} columns plotted."
                      "\n\n![distributions](artifacts/distributions.png)")


if __name__ == "__main__":
    run_service(plot_distributions)
