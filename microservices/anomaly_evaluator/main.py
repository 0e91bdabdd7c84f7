"""Evaluate an anomaly detector's output (predictions' anomaly score and flag, one row per data row).

With known labels (label_column, by default the bundle's target, with anomaly_label naming the anomalous
value, by default the rarer one): ROC AUC and average precision of the score, precision and recall of the
top-k scored rows (k = the number of true anomalies unless given) and of the detector's own flags.
Without labels: the score's distribution (mean, standard deviation, median, 90th and 99th percentiles),
the flagged fraction and how far the flagged rows' scores sit above the others (in standard deviations).

Works on the whole data table before a split; refuses predictions without an anomaly score.
"""

import numpy as np
from sklearn.metrics import average_precision_score, precision_score, recall_score, roc_auc_score

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import finite_metrics


def _labelled(truth, scores, flags, k):
    order = np.argsort(-scores, kind="stable")
    top = np.zeros(len(scores), dtype=bool)
    top[order[:k]] = True
    return {"roc_auc": roc_auc_score(truth, scores), "average_precision": average_precision_score(truth, scores),
            "k": k, "precision_at_k": truth[top].mean(), "recall_at_k": truth[top].sum() / truth.sum(),
            "flag_precision": precision_score(truth, flags, zero_division=0),
            "flag_recall": recall_score(truth, flags, zero_division=0), "anomaly_rate": truth.mean()}


def _unlabelled(scores, flags):
    spread = scores.std(ddof=1) if len(scores) > 1 else 0.0
    metrics = {"score_mean": scores.mean(), "score_std": spread, "score_median": np.median(scores),
               "score_p90": np.percentile(scores, 90), "score_p99": np.percentile(scores, 99),
               "flagged_fraction": flags.mean()}
    if flags.any() and (~flags).any() and spread > 0:
        metrics["flag_separation"] = (scores[flags].mean() - scores[~flags].mean()) / spread
        metrics["flag_overlap"] = float(scores[flags].min() < scores[~flags].max())
    return metrics


def evaluate_anomalies(inp, out, params):
    label_column = params.get("label_column", None) or inp.target
    anomaly_label = params.get("anomaly_label", None)
    top_k = params.get("k", None)
    if inp.is_split():
        raise ServiceError("anomaly scores belong to the whole 'data' table, but the bundle is split into train "
                           "and test; evaluate before the train/test splitter")
    data, predictions = inp.table("data"), inp.predictions()
    if "anomaly_score" not in predictions.columns:
        raise ServiceError("the predictions hold no 'anomaly_score' column; run an anomaly detection step first")
    if len(predictions) != len(data):
        raise ServiceError(f"{len(predictions)} anomaly scores for {len(data)} data rows")
    scores = predictions["anomaly_score"].to_numpy(dtype=float)
    flags = (predictions["is_anomaly"].to_numpy(dtype=bool) if "is_anomaly" in predictions.columns
             else np.zeros(len(scores), dtype=bool))
    if not np.isfinite(scores).all():
        raise ServiceError("the anomaly scores hold missing or infinite values")
    if label_column and label_column not in data.columns:
        raise ServiceError(f"label_column '{label_column}' is not a column of the data table")
    if label_column:
        known = data[label_column].notna().to_numpy()
        labels = data[label_column].astype(str).to_numpy()
        counts = data.loc[known, label_column].astype(str).value_counts()
        if len(counts) != 2:
            raise ServiceError(f"label_column '{label_column}' must have exactly 2 values (normal and anomalous), "
                               f"it has {len(counts)}")
        positive = str(anomaly_label) if anomaly_label is not None else counts.index[-1]
        if positive not in counts.index:
            raise ServiceError(f"anomaly_label {positive!r} is not a value of '{label_column}': {list(counts.index)}")
        truth = labels[known] == positive
        k = int(top_k) if top_k is not None else int(truth.sum())
        if not 1 <= k <= known.sum():
            raise ServiceError(f"k must be between 1 and {known.sum()}, got {k}")
        metrics = _labelled(truth, scores[known], flags[known], k)
        title = f"against '{label_column}' = {positive} ({int(truth.sum())} of {int(known.sum())} rows)"
    else:
        metrics, title = _unlabelled(scores, flags), "without labels: score distribution"
    metrics = finite_metrics(metrics)
    out.write_metrics({f"anomaly_eval.{key}": value for key, value in metrics.items()})
    out.append_report(f"## Anomaly detection {title}\n\n" + "\n".join(f"- {k}: {v:.4g}" for k, v in metrics.items()))


if __name__ == "__main__":
    run_service(evaluate_anomalies)
