"""Bootstrap confidence interval for a model's main test metric: the test rows are resampled with replacement
n_resamples times (numpy's default_rng(random_state), one ``integers(0, n, n)`` draw per resample), the
metric is recomputed on each resample, and the percentile interval at the given confidence is reported with
the point estimate on the full test set and the bootstrap standard deviation.

metric: "auto" (accuracy for classification, rmse for regression) or one of accuracy, balanced_accuracy,
f1_macro (classification) and rmse, mae, r2 (regression). Needs a split bundle with predictions; the
regression metrics refuse missing values in the target or the predictions.
"""

import warnings

import numpy as np
from sklearn.metrics import (accuracy_score, balanced_accuracy_score, f1_score, mean_absolute_error, r2_score,
                             root_mean_squared_error)

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import classification_results, regression_results

CLASSIFICATION_METRICS = {"accuracy": accuracy_score, "balanced_accuracy": balanced_accuracy_score,
                          "f1_macro": lambda y, p: f1_score(y, p, average="macro", zero_division=0)}
REGRESSION_METRICS = {"rmse": root_mean_squared_error, "mae": mean_absolute_error, "r2": r2_score}


def evaluate_with_intervals(inp, out, params):
    metric = params.get("metric", "auto")
    n_resamples = int(params.get("n_resamples", 1000))
    confidence = float(params.get("confidence", 0.95))
    random_state = int(params.get("random_state", 42))
    if not 10 <= n_resamples <= 20000:
        raise ServiceError(f"n_resamples must be between 10 and 20000, got {n_resamples}")
    if not 0.5 <= confidence < 1.0:
        raise ServiceError(f"confidence must be at least 0.5 and below 1, got {confidence}")
    if inp.predicts_numbers:
        y_true, y_pred = regression_results(inp)
        if y_true.isna().any() or y_pred.isna().any():
            raise ServiceError("the test target or the predictions have missing values; impute or drop them first")
        y_true, y_pred, choices, default = y_true.to_numpy(), y_pred.to_numpy(), REGRESSION_METRICS, "rmse"
    else:
        y_true, predictions = classification_results(inp)
        y_pred = predictions["prediction"].astype(str).to_numpy()
        choices, default = CLASSIFICATION_METRICS, "accuracy"
    metric = default if metric == "auto" else metric
    if metric not in choices:
        raise ServiceError(f"metric {metric!r} does not apply to a {inp.task_type} task; use one of "
                           f"{', '.join(choices)}")
    score = choices[metric]
    rng = np.random.default_rng(random_state)
    resampled = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a resample may miss a class (balanced accuracy warns, the value stands)
        for _ in range(n_resamples):
            rows = rng.integers(0, len(y_true), len(y_true))
            resampled.append(score(y_true[rows], y_pred[rows]))
    resampled = np.asarray(resampled, dtype=float)
    resampled = resampled[np.isfinite(resampled)]
    if len(resampled) < 10:
        raise ServiceError(f"{metric} is undefined on most resamples (too few test rows?)")
    low, high = np.quantile(resampled, [(1 - confidence) / 2, (1 + confidence) / 2])
    metrics = {"point": score(y_true, y_pred), "ci_low": low, "ci_high": high, "std": resampled.std(ddof=1)}
    out.write_metrics({f"bootstrap.{metric}.{key}": float(value) for key, value in metrics.items()})
    out.append_report(f"## Bootstrap confidence interval\n\n{metric} = {metrics['point']:.4f}, "
                      f"{confidence:.0%} interval [{low:.4f}, {high:.4f}] from {len(resampled)} resamples of "
                      f"the {len(y_true)} test rows (bootstrap std {metrics['std']:.4f}).")


if __name__ == "__main__":
    run_service(evaluate_with_intervals)
