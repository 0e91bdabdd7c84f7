"""Error profile of a regression model on the test set: MAE, median absolute error, the 90th percentile and
the maximum of the absolute errors, and MAPE (mean absolute percentage error, as a fraction).

Test rows whose target or prediction is missing are left out and counted (rows_dropped) rather than
refused; MAPE is computed over the rows whose target is not zero (rows with a zero target are counted in
mape_rows_skipped). Needs a numeric target and at least one complete row.
"""

import numpy as np
from sklearn.metrics import max_error, mean_absolute_error, mean_absolute_percentage_error, median_absolute_error

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import regression_results


def evaluate_errors(inp, out, params):
    percentile = float(params.get("percentile", 90))
    if not 0 < percentile < 100:
        raise ServiceError(f"percentile must be between 0 and 100, got {percentile}")
    y_true, y_pred = regression_results(inp)
    complete = (y_true.notna() & y_pred.notna()).to_numpy()
    if not complete.any():
        raise ServiceError("no test row has both a target value and a prediction")
    actual, predicted = y_true.to_numpy()[complete], y_pred.to_numpy()[complete]
    nonzero = actual != 0
    metrics = {
        "mean_absolute_error": mean_absolute_error(actual, predicted),
        "median_absolute_error": median_absolute_error(actual, predicted),
        f"absolute_error_p{percentile:g}": np.percentile(np.abs(actual - predicted), percentile),
        "max_error": max_error(actual, predicted),
        "rows_evaluated": int(complete.sum()),
        "rows_dropped": int((~complete).sum()),
        "mape_rows_skipped": int((~nonzero).sum()),
    }
    if nonzero.any():
        metrics["mape"] = mean_absolute_percentage_error(actual[nonzero], predicted[nonzero])
    out.write_metrics({k: v if isinstance(v, int) else float(v) for k, v in metrics.items()})
    notes = f"\n\n{metrics['rows_dropped']} test rows with a missing target or prediction were left out." \
        if metrics["rows_dropped"] else ""
    out.append_report("## Regression error profile\n\n" + "\n".join(f"- {k}: {v:.4g}" for k, v in metrics.items())
                      + notes)


if __name__ == "__main__":
    run_service(evaluate_errors)
