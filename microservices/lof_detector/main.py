"""Flag rows of the data table whose local density is much lower than their neighbours' (Local Outlier
Factor on standardized numeric features).

Writes `anomaly_score` (the outlier factor, about 1 for inliers),
`is_anomaly` and `why` per row, flagged by the rule every detector shares (docs/bundle-format.md).
Needs numeric features without missing values, before any train/test split.
"""

from sklearn.neighbors import LocalOutlierFactor

from dagsmith_kit import run_service
from dagsmith_kit.anomalies import write_anomalies
from dagsmith_kit.unsupervised import data_matrix


def detect(inp, out, params):
    contamination = params.get("contamination", "auto")
    n_neighbors = int(params.get("n_neighbors", 20))
    data, columns, values = data_matrix(inp, standardize=True)
    model = LocalOutlierFactor(n_neighbors=min(n_neighbors, len(values) - 1)).fit(values)
    write_anomalies(out, data, columns, -model.negative_outlier_factor_, "Local outlier factor anomalies",
                    contamination, {"n_neighbors": model.n_neighbors_})


if __name__ == "__main__":
    run_service(detect)
