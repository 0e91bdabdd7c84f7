"""Compare a model's test predictions with a dummy baseline learned from the training target only
(scikit-learn's DummyClassifier or DummyRegressor): for classification accuracy, balanced accuracy and macro
F1 of both, for regression RMSE, MAE and R2 of both, and the model's gain over the baseline.

strategy: "auto" (most_frequent for classification, mean for regression) or a DummyClassifier strategy
(most_frequent, prior, stratified, uniform) / DummyRegressor strategy (mean, median). Refuses a training
target with missing values, and missing values in a regression target or its predictions.
"""

import numpy as np
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.metrics import (accuracy_score, balanced_accuracy_score, f1_score, mean_absolute_error, r2_score,
                             root_mean_squared_error)

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import classification_results, finite_metrics, markdown_table, regression_results


def _scores(y_true, y_pred, regression):
    if regression:
        return {"rmse": root_mean_squared_error(y_true, y_pred), "mae": mean_absolute_error(y_true, y_pred),
                "r2": r2_score(y_true, y_pred)}
    return {"accuracy": accuracy_score(y_true, y_pred), "balanced_accuracy": balanced_accuracy_score(y_true, y_pred),
            "f1_macro": f1_score(y_true, y_pred, average="macro", zero_division=0)}


def evaluate_against_baseline(inp, out, params):
    strategy = params.get("strategy", "auto")
    random_state = int(params.get("random_state", 42))
    regression = inp.predicts_numbers
    if regression:
        y_true, y_pred = regression_results(inp)
        if y_true.isna().any() or y_pred.isna().any():
            raise ServiceError("the test target or the predictions have missing values; impute or drop them first")
        strategy = "mean" if strategy == "auto" else strategy
        allowed, dummy = ("mean", "median"), DummyRegressor
    else:
        y_true, predictions = classification_results(inp)
        y_pred = predictions["prediction"].astype(str)
        strategy = "most_frequent" if strategy == "auto" else strategy
        allowed, dummy = ("most_frequent", "prior", "stratified", "uniform"), DummyClassifier
    if strategy not in allowed:
        raise ServiceError(f"strategy {strategy!r} is not a baseline for this task; use one of {', '.join(allowed)}")
    train_target = inp.table("train")[inp.target]
    if train_target.isna().any():
        raise ServiceError(f"the training target '{inp.target}' has missing values; drop those rows first")
    train_target = train_target.astype(float) if regression else train_target.astype(str)
    options = {} if regression else {"random_state": random_state}
    baseline = dummy(strategy=strategy, **options).fit(np.zeros((len(train_target), 1)), train_target)
    baseline_pred = baseline.predict(np.zeros((len(y_true), 1)))
    model, reference = _scores(y_true, y_pred, regression), _scores(y_true, baseline_pred, regression)
    metrics = {**{f"model_{k}": v for k, v in model.items()}, **{f"baseline_{k}": v for k, v in reference.items()}}
    metrics.update({f"{k}_gain": model[k] - reference[k] for k in model if k not in ("rmse", "mae")})
    if regression and reference["rmse"] > 0:
        metrics["rmse_reduction"] = 1 - model["rmse"] / reference["rmse"]
    metrics = finite_metrics(metrics)
    out.write_metrics(metrics)
    rows = [[name, model[name], reference[name]] for name in model]
    out.append_report(f"## Model against a {strategy} baseline\n\n"
                      + markdown_table(["metric", "model", f"baseline ({strategy})"], rows))


if __name__ == "__main__":
    run_service(evaluate_against_baseline)
