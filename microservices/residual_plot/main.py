"""Plot a regressor's test residuals (actual minus predicted): residuals against the predicted values, and
their histogram. Writes the residuals' mean, standard deviation and largest absolute value to metrics.
Refuses classification tasks, a non-numeric target and missing values in the test target or the predictions.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import regression_results, save_figure
from dagsmith_kit.params import at_least


def plot_residuals(inp, out, params):
    bins = at_least("bins", int(params.get("bins", 30)), 1)
    y_true, y_pred = regression_results(inp)
    gaps = int(y_true.isna().sum() + y_pred.isna().sum())
    if gaps:
        raise ServiceError(f"residual_plot refuses missing values: {gaps} missing in the test target or the "
                           "predictions; drop or impute those rows first")
    residuals = (y_true - y_pred).rename("residual")
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    left.scatter(y_pred, residuals, s=14, alpha=0.7, color="teal")
    left.axhline(0, color="crimson", lw=1)
    left.set(xlabel="predicted", ylabel="residual (actual - predicted)", title="Residuals vs predicted")
    right.hist(residuals, bins=bins, color="teal", edgecolor="white")
    right.axvline(0, color="crimson", lw=1)
    right.set(xlabel="residual", ylabel="rows", title="Residual distribution")
    save_figure(out, fig, "residuals.png")
    stats = {"residual.mean": float(residuals.mean()), "residual.std": float(residuals.std(ddof=1)),
             "residual.max_abs": float(residuals.abs().max())}
    out.write_metrics(stats)
    out.append_report(f"## Residuals\n\n{len(residuals)} test rows: mean residual {stats['residual.mean']:.4g}, "
                      f"standard deviation {stats['residual.std']:.4g}, largest |residual| "
                      f"{stats['residual.max_abs']:.4g}.\n\n![residuals](artifacts/residuals.png)")


if __name__ == "__main__":
    run_service(plot_residuals)
