"""Cumulative gain and lift of a binary classifier on the test set: rows are ranked by the positive class's
probability (highest first, ties kept in row order) and cut into n_bins groups of (nearly) equal size; for
the top k groups, gain is the share of all positives they hold and lift is their positive rate divided by
the overall positive rate. Also reports ROC AUC.

Binary targets with ``proba_`` columns only; needs at least one positive test row and n_bins rows.
"""

import numpy as np
from sklearn.metrics import roc_auc_score

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import binary_results, markdown_table


def evaluate_lift(inp, out, params):
    pos_label = params.get("pos_label", None)
    n_bins = int(params.get("n_bins", 10))
    is_positive, scores, positive = binary_results(inp, pos_label, "lift and gain")
    if not 2 <= n_bins <= len(scores):
        raise ServiceError(f"n_bins must be between 2 and the {len(scores)} test rows, got {n_bins}")
    if not is_positive.any():
        raise ServiceError(f"no test row has the positive class {positive!r}; lift and gain are undefined")
    ranked = is_positive[np.argsort(-scores, kind="stable")]
    base_rate = ranked.mean()
    metrics, rows, taken, found = {}, [], 0, 0
    for k, group in enumerate(np.array_split(ranked, n_bins), start=1):
        taken, found = taken + len(group), found + int(group.sum())
        gain, lift = found / ranked.sum(), (found / taken) / base_rate
        metrics[f"cumulative_gain_{k}"] = gain
        metrics[f"cumulative_lift_{k}"] = lift
        rows.append([k, taken, int(group.sum()), group.mean() / base_rate, gain, lift])
    metrics["top_bin_lift"] = metrics["cumulative_lift_1"]
    if not is_positive.all():
        metrics["roc_auc"] = roc_auc_score(is_positive, scores)
    out.write_metrics({k: float(v) for k, v in metrics.items()})
    out.append_report(f"## Lift and gain (positive class: {positive}, {n_bins} bins)\n\n"
                      + markdown_table(["bin", "rows so far", "positives in bin", "lift in bin",
                                        "cumulative gain", "cumulative lift"], rows))


if __name__ == "__main__":
    run_service(evaluate_lift)
