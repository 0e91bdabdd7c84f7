"""Flag rows of the data table that lie outside the region a one-class SVM learns around most of the data
(RBF kernel on standardized numeric features).

nu bounds the share of rows the boundary leaves outside. Writes `anomaly_score` (minus the SVM decision value:
positive means outside), `is_anomaly` (the `contamination` fraction of rows when the goal gives one, else the rows
beyond the upper fence of the scores, 1-5% of the table) and `why` (the values that make a flagged row
unusual) per row.
Kernel SVMs scale quadratically, so tables above max_rows (default 10,000) are refused. Needs numeric
features without missing values, before any train/test split.
"""

from sklearn.svm import OneClassSVM

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.anomalies import write_anomalies
from dagsmith_kit.unsupervised import data_matrix


def detect(inp, out, params):
    contamination = params.get("contamination", "auto")
    nu = float(params.get("nu", 0.05))
    kernel = params.get("kernel", "rbf")
    max_rows = int(params.get("max_rows", 10000))
    if not 0 < nu <= 1:
        raise ServiceError(f"nu must be in (0, 1], got {nu}")
    if kernel not in ("rbf", "poly", "sigmoid", "linear"):
        raise ServiceError(f"kernel must be rbf, poly, sigmoid or linear, got {kernel!r}")
    data, columns, values = data_matrix(inp, standardize=True, max_rows=max_rows)
    model = OneClassSVM(nu=nu, kernel=kernel, gamma=params.get("gamma", "scale")).fit(values)
    write_anomalies(out, data, columns, -model.decision_function(values), "One-class SVM anomalies", contamination,
                    {"nu": nu, "support_vectors": len(model.support_)}, values=values,
                    score=lambda new: -model.decision_function(new))


if __name__ == "__main__":
    run_service(detect)
