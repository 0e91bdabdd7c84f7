"""Scatter a regressor's test predictions against the actual target, with the identity line y = x and the R²
of the plotted rows. Rows with a missing target or prediction are left out and counted, not refused.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from sklearn.metrics import r2_score

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import regression_results, save_figure
from dagsmith_kit.params import at_least


def plot_prediction_vs_actual(inp, out, params):
    point_size = at_least("point_size", float(params.get("point_size", 16)), 0)
    y_true, y_pred = regression_results(inp)
    complete = y_true.notna() & y_pred.notna()
    dropped = int((~complete).sum())
    y_true, y_pred = y_true[complete], y_pred[complete]
    if len(y_true) < 2:
        raise ServiceError(f"only {len(y_true)} test rows have both a target and a prediction; nothing to plot")
    r2 = float(r2_score(y_true, y_pred))
    low, high = min(y_true.min(), y_pred.min()), max(y_true.max(), y_pred.max())
    fig, ax = plt.subplots(figsize=(6, 6))
    ax.scatter(y_true, y_pred, s=point_size, alpha=0.7, color="royalblue")
    ax.plot([low, high], [low, high], "--", color="grey", label="perfect prediction")
    ax.set(xlabel=f"actual {inp.target}", ylabel=f"predicted {inp.target}",
           title=f"Predicted vs actual (R² = {r2:.3f})")
    ax.legend(loc="upper left")
    save_figure(out, fig, "prediction_vs_actual.png")
    out.write_metrics({"pred_vs_actual.r2": r2, "pred_vs_actual.rows_plotted": len(y_true),
                       "pred_vs_actual.rows_dropped": dropped})
    note = f" {dropped} rows with a missing target or prediction were left out." if dropped else ""
    out.append_report(f"## Predicted vs actual\n\n{len(y_true)} test rows, R² = {r2:.4f}.{note}"
                      "\n\n![predicted vs actual](artifacts/prediction_vs_actual.png)")


if __name__ == "__main__":
    run_service(plot_prediction_vs_actual)
