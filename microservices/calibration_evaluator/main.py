"""Check how well a classifier's probabilities are calibrated on the test set, for two or more classes:
the Brier score (scikit-learn's, over every ``proba_<label>`` column) and the expected and maximum
calibration error of the top-label confidence (rows binned by their highest probability into n_bins
equal-width bins; ECE is the row-weighted mean gap between accuracy and mean confidence per bin).

Needs ``proba_`` columns (refuses models that gave no probabilities) and a probability column for every
test label.
"""

import numpy as np
from sklearn.metrics import accuracy_score, brier_score_loss

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import classification_results, markdown_table, normalised_probabilities


def evaluate_calibration(inp, out, params):
    n_bins = int(params.get("n_bins", 10))
    if not 2 <= n_bins <= 100:
        raise ServiceError(f"n_bins must be between 2 and 100, got {n_bins}")
    y_true, predictions = classification_results(inp)
    labels, proba = normalised_probabilities(y_true, predictions)
    confidence = proba.max(axis=1)
    top_label = np.asarray(labels)[proba.argmax(axis=1)]
    correct = top_label == y_true
    bins = np.minimum((confidence * n_bins).astype(int), n_bins - 1)
    gaps, rows = [], []
    for b in range(n_bins):
        members = bins == b
        if members.any():
            accuracy, mean_confidence = correct[members].mean(), confidence[members].mean()
            gaps.append((members.mean(), abs(accuracy - mean_confidence)))
            rows.append([f"{b / n_bins:.2f}-{(b + 1) / n_bins:.2f}", int(members.sum()), mean_confidence, accuracy])
    metrics = {
        "brier_score": brier_score_loss(y_true, proba, labels=labels),
        "expected_calibration_error": sum(weight * gap for weight, gap in gaps),
        "max_calibration_error": max(gap for _, gap in gaps),
        "mean_confidence": confidence.mean(),
        "top_label_accuracy": accuracy_score(y_true, top_label),
    }
    out.write_metrics({k: float(v) for k, v in metrics.items()})
    out.append_report("## Probability calibration\n\n" + "\n".join(f"- {k}: {v:.4f}" for k, v in metrics.items())
                      + "\n\n" + markdown_table(["confidence bin", "rows", "mean confidence", "accuracy"], rows))


if __name__ == "__main__":
    run_service(evaluate_calibration)
