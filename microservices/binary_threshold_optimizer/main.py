"""Find the decision threshold of a binary classifier on the test set: the one that maximises F1 and the one
that maximises Youden's J (true positive rate minus false positive rate), from the positive class's
``proba_<label>`` column. Reports precision, recall and F1 at both and at the usual 0.5.

Refuses multiclass targets, predictions without probabilities and test labels of a single class.
The model is not changed: the thresholds are reported for a person (or a later step) to apply.
"""

import numpy as np
from sklearn.metrics import f1_score, precision_recall_curve, precision_score, recall_score, roc_curve

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import binary_results, markdown_table


def evaluate_thresholds(inp, out, params):
    pos_label = params.get("pos_label", None)
    default_threshold = float(params.get("default_threshold", 0.5))
    is_positive, scores, positive = binary_results(inp, pos_label, "threshold tuning")
    if is_positive.all() or not is_positive.any():
        raise ServiceError("the test labels hold a single class; thresholds cannot be tuned on them")
    precision, recall, pr_thresholds = precision_recall_curve(is_positive, scores)
    denominator = precision[:-1] + recall[:-1]
    f1 = np.divide(2 * precision[:-1] * recall[:-1], denominator, out=np.zeros_like(denominator),
                   where=denominator > 0)
    best_f1 = float(pr_thresholds[int(np.argmax(f1))])
    fpr, tpr, roc_thresholds = roc_curve(is_positive, scores)
    finite = np.isfinite(roc_thresholds)
    j = np.where(finite, tpr - fpr, -np.inf)
    best_j = int(np.argmax(j))
    chosen = {"best_f1": best_f1, "youden": float(roc_thresholds[best_j]), "default": default_threshold}
    metrics, rows = {"youden_j": float(j[best_j])}, []
    for name, threshold in chosen.items():
        predicted = scores >= threshold
        scores_at = {"precision": precision_score(is_positive, predicted, zero_division=0),
                     "recall": recall_score(is_positive, predicted, zero_division=0),
                     "f1": f1_score(is_positive, predicted, zero_division=0)}
        metrics[f"threshold_{name}"] = threshold
        metrics.update({f"{key}_at_{name}_threshold": float(value) for key, value in scores_at.items()})
        rows.append([name, threshold, *scores_at.values(), int(predicted.sum())])
    out.write_metrics(metrics)
    out.append_report(f"## Decision thresholds (positive class: {positive})\n\n"
                      + markdown_table(["threshold", "value", "precision", "recall", "F1", "predicted positive"],
                                       rows)
                      + f"\n\nYouden's J at its best threshold: {metrics['youden_j']:.4f}. "
                      "The model itself is unchanged.")


if __name__ == "__main__":
    run_service(evaluate_thresholds)
