"""Compare a model's test performance across the groups of one column (group_column, e.g. sex or region):
per group the number of test rows and, for classification, accuracy and (binary targets) the rate of
positive predictions, the true positive rate and the false positive rate; for regression MAE, RMSE and mean
error. Across the groups with at least min_group_size rows it reports the largest gaps: accuracy or MAE gap,
and for binary targets the demographic parity difference, the disparate impact ratio (lowest over highest
positive rate) and the equal opportunity difference (TPR gap). Missing group values form a group of their own.

Needs group_column, a column of the test table other than the target with at most max_groups values
(bin continuous columns first).
"""

import numpy as np
import pandas as pd
from sklearn.metrics import accuracy_score, mean_absolute_error, root_mean_squared_error

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import classification_results, finite_metrics, markdown_table, regression_results


def _classification_scores(y_true, y_pred, positive):
    scores = {"accuracy": accuracy_score(y_true, y_pred)}
    if positive is not None:
        actual, predicted = y_true == positive, y_pred == positive
        scores["positive_rate"] = predicted.mean()
        scores["true_positive_rate"] = predicted[actual].mean() if actual.any() else np.nan
        scores["false_positive_rate"] = predicted[~actual].mean() if (~actual).any() else np.nan
    return scores


def _regression_scores(y_true, y_pred):
    return {"mae": mean_absolute_error(y_true, y_pred), "rmse": root_mean_squared_error(y_true, y_pred),
            "mean_error": float(np.mean(y_pred - y_true))}


def evaluate_by_group(inp, out, params):
    if "group_column" not in params:
        raise ServiceError("this step needs the group_column parameter: the column whose groups are compared")
    group_column = params["group_column"]
    pos_label = params.get("pos_label", None)
    min_group_size = int(params.get("min_group_size", 10))
    max_groups = int(params.get("max_groups", 20))
    if group_column == inp.target:
        raise ServiceError("group_column must not be the target")
    regression = inp.predicts_numbers
    positive = None
    if regression:
        y_true, y_pred = regression_results(inp)
        if y_true.isna().any() or y_pred.isna().any():
            raise ServiceError("the test target or the predictions have missing values; impute or drop them first")
        y_true, y_pred = y_true.to_numpy(), y_pred.to_numpy()
    else:
        y_true, predictions = classification_results(inp)
        y_pred = predictions["prediction"].astype(str).to_numpy()
        labels = sorted(set(y_true) | set(y_pred))
        if len(labels) == 2:
            positive = str(pos_label) if pos_label is not None else labels[1]
            if positive not in labels:
                raise ServiceError(f"pos_label {positive!r} is not one of the classes {labels}")
    test = inp.table("test")
    if group_column not in test.columns:
        raise ServiceError(f"group_column '{group_column}' is not a column of the test table")
    groups = test[group_column].astype("string").fillna("missing").to_numpy()
    values = pd.unique(groups)
    if len(values) > max_groups:
        raise ServiceError(f"group_column '{group_column}' has {len(values)} values, more than max_groups="
                           f"{max_groups}; bin it into fewer groups first")
    per_group = {}
    for value in sorted(values):
        members = groups == value
        if regression:
            scores = _regression_scores(y_true[members], y_pred[members])
        else:
            scores = _classification_scores(y_true[members], y_pred[members], positive)
        per_group[value] = {"count": int(members.sum()), **scores}
    compared = {g: s for g, s in per_group.items() if s["count"] >= min_group_size}
    if len(compared) < 2:
        raise ServiceError(f"fewer than 2 groups of '{group_column}' have at least min_group_size="
                           f"{min_group_size} test rows; nothing to compare")
    metrics = {f"fairness.{g}.{k}": v for g, s in per_group.items() for k, v in s.items()}

    def spread(key):
        found = [s[key] for s in compared.values() if np.isfinite(s[key])]
        return (max(found) - min(found), min(found), max(found)) if len(found) >= 2 else (np.nan, np.nan, np.nan)

    if regression:
        metrics["fairness.mae_gap"] = spread("mae")[0]
    else:
        metrics["fairness.accuracy_gap"] = spread("accuracy")[0]
        if positive is not None:
            gap, low, high = spread("positive_rate")
            metrics["fairness.demographic_parity_difference"] = gap
            metrics["fairness.disparate_impact_ratio"] = low / high if high > 0 else np.nan
            metrics["fairness.equal_opportunity_difference"] = spread("true_positive_rate")[0]
    metrics = finite_metrics(metrics)
    out.write_metrics(metrics)
    keys = list(next(iter(per_group.values())))
    rows = [[g, *[s[k] for k in keys]] for g, s in per_group.items()]
    gaps = "\n".join(f"- {k.removeprefix('fairness.')}: {v:.4f}" for k, v in metrics.items() if k.count(".") == 1)
    out.append_report(f"## Performance by {group_column}"
                      + (f" (positive class: {positive})" if positive is not None else "") + "\n\n"
                      + markdown_table(["group", *keys], rows) + f"\n\nGaps between groups with at least "
                      f"{min_group_size} rows:\n\n{gaps}")


if __name__ == "__main__":
    run_service(evaluate_by_group)
