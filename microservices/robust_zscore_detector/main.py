"""Flag rows of the data table holding an extreme value: the robust z-score of each numeric feature is
0.6745 * (x - median) / MAD (Iglewicz-Hoaglin), a row's score is its largest |z|, above threshold is an anomaly
(at most the 5% most extreme rows, or the `contamination` fraction when the goal gives one); `why` names the
extreme values.

Missing values are ignored (a row is scored on the values it has); constant columns never flag.
"""

import numpy as np

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.anomalies import write_anomalies
from dagsmith_kit.unsupervised import data_matrix


def robust_z(values, median, scale):
    """Each value's robust z against the training median and scale, and each row's largest (0 when all missing)."""
    deviation = np.abs(values - median)
    z = np.divide(deviation, scale, out=np.zeros_like(deviation), where=scale > 0)
    return z, np.nan_to_num(np.nanmax(np.where(np.isnan(z), -np.inf, z), axis=1), neginf=0.0)


def detect(inp, out, params):
    contamination = params.get("contamination", "auto")
    threshold = float(params.get("threshold", 3.5))
    if threshold <= 0:
        raise ServiceError(f"threshold must be positive, got {threshold}")
    data, columns, values = data_matrix(inp, standardize=False, allow_missing=True, min_rows=2)
    median = np.nanmedian(values, axis=0)
    deviation = np.abs(values - median)
    mad = np.nanmedian(deviation, axis=0) / 0.6745
    mean_ad = np.nanmean(deviation, axis=0) * 1.253314
    scale = np.where(mad > 0, mad, mean_ad)
    z, scores = robust_z(values, median, scale)
    metrics = write_anomalies(out, data, columns, scores, "Robust z-score anomalies", contamination,
                              {"threshold": threshold, "max_robust_z": float(scores.max())}, flags=scores > threshold,
                              values=values, score=lambda new: robust_z(new, median, scale)[1])
    if metrics["n_anomalies"]:
        out.append_report(f"Column with the most extreme values: {columns[np.argmax((z > threshold).sum(axis=0))]}")


if __name__ == "__main__":
    run_service(detect)
