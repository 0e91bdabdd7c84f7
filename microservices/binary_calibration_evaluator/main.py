"""Reliability of a binary classifier's positive-class probability on the test set: scikit-learn's
calibration curve (observed positive rate against mean predicted probability in n_bins bins, "uniform"
or "quantile"), the Brier score, the largest and the mean gap between the two, and calibration-in-the-large
(mean predicted probability minus the observed positive rate).

Binary targets only: multiclass targets and models without ``proba_`` columns are refused.
"""

import numpy as np
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import binary_results, markdown_table


def evaluate_reliability(inp, out, params):
    pos_label = params.get("pos_label", None)
    n_bins = int(params.get("n_bins", 10))
    strategy = params.get("strategy", "uniform")
    if strategy not in ("uniform", "quantile"):
        raise ServiceError(f"strategy must be 'uniform' or 'quantile', got {strategy!r}")
    if n_bins < 2:
        raise ServiceError(f"n_bins must be at least 2, got {n_bins}")
    is_positive, scores, positive = binary_results(inp, pos_label, "the reliability curve")
    observed, predicted = calibration_curve(is_positive, scores, n_bins=n_bins, strategy=strategy)
    gaps = np.abs(observed - predicted)
    metrics = {
        "brier_score": brier_score_loss(is_positive, scores),
        "calibration_max_gap": gaps.max(),
        "calibration_mean_gap": gaps.mean(),
        "calibration_in_the_large": scores.mean() - is_positive.mean(),
        "calibration_bins": len(observed),
    }
    out.write_metrics({k: float(v) for k, v in metrics.items()})
    rows = [[i + 1, p, o, abs(o - p)] for i, (o, p) in enumerate(zip(observed, predicted))]
    out.append_report(f"## Reliability (positive class: {positive}, {strategy} bins)\n\n"
                      + "\n".join(f"- {k}: {v:.4f}" for k, v in metrics.items()) + "\n\n"
                      + markdown_table(["bin", "mean predicted", "observed rate", "gap"], rows))


if __name__ == "__main__":
    run_service(evaluate_reliability)
