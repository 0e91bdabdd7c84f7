"""Precision-recall metrics of a binary classifier on the test set, from the positive class's probability:
average precision, the area under the precision-recall curve (trapezoidal), and precision, recall and F1 of
the positive class at a probability threshold. The positive rate is reported too: it is the average
precision of a classifier that guesses.

Binary targets with ``proba_`` columns only: multiclass targets and models without probabilities are refused.
"""

from sklearn.metrics import (auc, average_precision_score, f1_score, precision_recall_curve, precision_score,
                             recall_score)

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import binary_results


def evaluate_precision_recall(inp, out, params):
    pos_label = params.get("pos_label", None)
    threshold = float(params.get("threshold", 0.5))
    if not 0.0 <= threshold <= 1.0:
        raise ServiceError(f"threshold must be a probability between 0 and 1, got {threshold}")
    is_positive, scores, positive = binary_results(inp, pos_label, "precision-recall evaluation")
    if not is_positive.any():
        raise ServiceError(f"no test row has the positive class {positive!r}; precision and recall are undefined")
    precision, recall, _ = precision_recall_curve(is_positive, scores)
    predicted = scores >= threshold
    metrics = {
        "average_precision": average_precision_score(is_positive, scores),
        "pr_auc": auc(recall, precision),
        "precision": precision_score(is_positive, predicted, zero_division=0),
        "recall": recall_score(is_positive, predicted, zero_division=0),
        "f1": f1_score(is_positive, predicted, zero_division=0),
        "positive_rate": is_positive.mean(),
    }
    out.write_metrics({k: float(v) for k, v in metrics.items()})
    lift = metrics["average_precision"] / metrics["positive_rate"]
    out.append_report(f"## Precision and recall (positive class: {positive}, threshold {threshold:g})\n\n"
                      + "\n".join(f"- {k}: {v:.4f}" for k, v in metrics.items())
                      + f"\n\nAverage precision is {lift:.2f} times that of random guessing.")


if __name__ == "__main__":
    run_service(evaluate_precision_recall)
