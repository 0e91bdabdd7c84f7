"""Score classification predictions against the held-out test labels: accuracy, F1, ROC AUC, log loss."""

import numpy as np
from sklearn.metrics import accuracy_score, balanced_accuracy_score, f1_score, log_loss, roc_auc_score

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.bundle import probabilities_by_label


def evaluate(inp, out, params):
    target = inp.require_target()
    y_true = inp.table("test")[target].astype(str).to_numpy()
    predictions = inp.predictions()
    if len(predictions) != len(y_true):
        raise ServiceError(f"{len(predictions)} predictions for {len(y_true)} test rows")
    y_pred = predictions["prediction"].astype(str).to_numpy()
    average = params.get("average", "macro")
    metrics = {
        "accuracy": accuracy_score(y_true, y_pred),
        "balanced_accuracy": balanced_accuracy_score(y_true, y_pred),
        "f1": f1_score(y_true, y_pred, average=average),
    }
    labels, columns = probabilities_by_label(predictions)
    if labels:
        proba = columns.to_numpy(dtype=float)
        proba = proba / np.clip(proba.sum(axis=1, keepdims=True), 1e-12, None)
        if set(y_true) <= set(labels) and len(set(y_true)) > 1:
            if len(labels) == 2:
                metrics["roc_auc"] = roc_auc_score(y_true == labels[1], proba[:, 1])
            else:
                metrics["roc_auc"] = roc_auc_score(y_true, proba, multi_class="ovr", labels=labels)
            metrics["log_loss"] = log_loss(y_true, proba, labels=labels)
    out.write_metrics({k: float(v) for k, v in metrics.items()})
    out.append_report("## Classification metrics\n\n" + "\n".join(f"- {k}: {v:.4f}" for k, v in metrics.items()))


if __name__ == "__main__":
    run_service(evaluate)
