"""Explore the whole dataset (data, or train and test together) and say what was found: statistics, distributions,
missing values, correlations, outliers per column and, with a ``focus`` column, what goes with it most.

``analyses`` names the parts to run (all of them by default); the findings go to report.md, metrics.json,
exploration.json and PNG plots. The data is unchanged.
"""

import matplotlib

matplotlib.use("Agg")

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.exploration import requested, write_exploration
from dagsmith_kit.insight import analysis_table, described_columns


def explore(inp, out, params):
    focus = params.get("focus")
    method = params.get("method", "spearman")
    outlier_factor = float(params.get("outlier_factor", 1.5))
    max_plotted = int(params.get("max_plotted", 16))
    if method not in ("pearson", "spearman"):
        raise ServiceError(f"method must be 'pearson' or 'spearman', got {method!r}")
    if outlier_factor <= 0:
        raise ServiceError(f"outlier_factor must be positive, got {outlier_factor}")
    frame = analysis_table(inp)
    analyses = requested(params.get("analyses"), focus)
    write_exploration(out, frame, described_columns(inp, frame), analyses, focus, method=method,
                      outlier_factor=outlier_factor, max_plotted=max_plotted)


if __name__ == "__main__":
    run_service(explore)
