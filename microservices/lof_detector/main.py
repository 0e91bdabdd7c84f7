"""Flag rows of the data table whose local density is much lower than their neighbours' (Local Outlier
Factor on standardized numeric features).

Writes `anomaly_score` (the outlier factor, about 1 for inliers),
`is_anomaly` (the `contamination` fraction of rows when the goal gives one, else the rows beyond the upper
fence of the scores, 1-5% of the table) and `why` (the values that make a flagged row unusual) per row.
Needs numeric features without missing values, before any train/test split.
"""

from sklearn.neighbors import LocalOutlierFactor

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.anomalies import write_anomalies
from dagsmith_kit.unsupervised import data_matrix


def detect(inp, out, params):
    contamination = params.get("contamination", "auto")
    n_neighbors = int(params.get("n_neighbors", 20))
    if n_neighbors < 1:
        raise ServiceError(f"n_neighbors must be at least 1, got {n_neighbors}")
    data, columns, values = data_matrix(inp, standardize=True)
    model = LocalOutlierFactor(n_neighbors=min(n_neighbors, len(values) - 1)).fit(values)
    write_anomalies(out, data, columns, -model.negative_outlier_factor_, "Local outlier factor anomalies",
                    contamination, {"n_neighbors": model.n_neighbors_})


if __name__ == "__main__":
    run_service(detect)
