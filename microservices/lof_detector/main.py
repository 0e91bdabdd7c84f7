"""Flag rows of the data table whose local density is much lower than their neighbours' (Local Outlier
Factor on standardized numeric features).

Writes `anomaly_score` (the outlier factor, about 1 for inliers) and `is_anomaly` per row. Needs numeric
features without missing values, before any train/test split.
"""

from sklearn.neighbors import LocalOutlierFactor

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.unsupervised import data_matrix, write_anomalies


def detect(inp, out, params):
    n_neighbors = int(params.get("n_neighbors", 20))
    contamination = params.get("contamination", "auto")
    if contamination != "auto" and not (isinstance(contamination, (int, float)) and 0 < contamination <= 0.5):
        raise ServiceError(f"contamination must be 'auto' or a fraction in (0, 0.5], got {contamination!r}")
    if n_neighbors < 1:
        raise ServiceError(f"n_neighbors must be at least 1, got {n_neighbors}")
    _, _, values = data_matrix(inp, standardize=True)
    model = LocalOutlierFactor(n_neighbors=min(n_neighbors, len(values) - 1), contamination=contamination)
    flags = model.fit_predict(values) == -1
    write_anomalies(out, -model.negative_outlier_factor_, flags, "Local outlier factor anomalies",
                    {"n_neighbors": model.n_neighbors_, "score_threshold": float(-model.offset_)})


if __name__ == "__main__":
    run_service(detect)
