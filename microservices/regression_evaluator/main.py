"""Score regression predictions against the held-out test target: RMSE, MAE, R2, their std-normalised forms
(nrmse, nmae) and the RMSE of a baseline that always predicts the training mean.
"""

import numpy as np
from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score

from dagsmith_kit import ServiceError, run_service


def evaluate(inp, out, params):
    target = inp.require_target()
    test = inp.table("test")
    if not np.issubdtype(test[target].dtype, np.number):
        raise ServiceError(f"regression metrics need a numeric target, but '{target}' is {test[target].dtype}")
    y_true = test[target].to_numpy(dtype=float)
    y_pred = inp.predictions()["prediction"].to_numpy(dtype=float)
    if len(y_pred) != len(y_true):
        raise ServiceError(f"{len(y_pred)} predictions for {len(y_true)} test rows")
    if np.isnan(y_true).any() or np.isnan(y_pred).any():
        raise ServiceError("the test target or the predictions contain missing values")
    baseline = inp.table("train")[target].mean() if inp.is_split() else y_true.mean()
    scale = y_true.std() or 1.0
    rmse = float(np.sqrt(mean_squared_error(y_true, y_pred)))
    mae = float(mean_absolute_error(y_true, y_pred))
    metrics = {
        "rmse": rmse,
        "mae": mae,
        "r2": float(r2_score(y_true, y_pred)),
        "nrmse": rmse / scale,
        "nmae": mae / scale,
        "baseline_rmse": float(np.sqrt(np.mean((y_true - baseline) ** 2))),
    }
    out.write_metrics(metrics)
    verdict = "beats" if rmse < metrics["baseline_rmse"] else "does NOT beat"
    out.append_report("## Regression metrics\n\n" + "\n".join(f"- {k}: {v:.4f}" for k, v in metrics.items())
                      + f"\n\nThe model {verdict} the mean-predictor baseline.")


if __name__ == "__main__":
    run_service(evaluate)
