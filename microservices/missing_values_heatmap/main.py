"""Draw where the values are missing in the whole dataset: a row-by-column heatmap of the gaps (for tall
tables, up to ``max_rows`` evenly spaced rows are drawn) and a bar chart of the missing fraction per column.
Fractions are computed on every row and written to metrics (``missing.<column>`` for columns with gaps).
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import analysis_table, described_columns, markdown_table, save_figure
from dagsmith_kit.params import at_least


def plot_missing_values(inp, out, params):
    max_rows = at_least("max_rows", int(params.get("max_rows", 2000)), 10)
    max_columns = at_least("max_columns", int(params.get("max_columns", 60)), 1)
    frame = analysis_table(inp)
    columns = described_columns(inp, frame)
    if frame.empty or not columns:
        raise ServiceError("the table has no rows or no columns to draw")
    gaps = frame[columns].isna()
    fraction = gaps.mean()
    shown = [c for c in columns if c in set(fraction.sort_values(ascending=False, kind="stable").index[:max_columns])]
    rows = np.unique(np.linspace(0, len(frame) - 1, min(max_rows, len(frame))).round().astype(int))
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5.5), gridspec_kw={"width_ratios": [3, 2]})
    left.imshow(gaps[shown].to_numpy()[rows], aspect="auto", cmap="Greys", vmin=0, vmax=1, interpolation="nearest")
    left.set_xticks(range(len(shown)), shown, rotation=90, fontsize=7)
    left.set(ylabel=f"row ({len(rows)} of {len(frame)} drawn)", title="Missing values (black)")
    right.barh(shown[::-1], fraction[shown][::-1].to_numpy(), color="dimgray")
    right.tick_params(axis="y", labelsize=7)
    right.set(xlabel="missing fraction", xlim=(0, min(1.0, max(0.05, 1.15 * fraction.max()))),
              title="Missing fraction per column")
    save_figure(out, fig, "missing_values.png")
    with_gaps = fraction[fraction > 0]
    out.write_metrics({"missing.total_fraction": float(gaps.to_numpy().mean()),
                       "missing.columns_with_gaps": len(with_gaps),
                       "missing.rows_with_gaps": int(gaps.any(axis=1).sum()),
                       **{f"missing.{column}": float(value) for column, value in with_gaps.items()}})
    listed = [[c, int(gaps[c].sum()), float(v)] for c, v in with_gaps.sort_values(ascending=False).items()]
    table = markdown_table(["column", "missing", "fraction"], listed)
    out.append_report("## Missing values\n\n" + (table if len(with_gaps) else "No missing values.")
                      + "\n\n![missing values](artifacts/missing_values.png)")


if __name__ == "__main__":
    run_service(plot_missing_values)
