"""Score every row of the data table for anomalies with an isolation forest on its numeric features.

Writes `anomaly_score` (higher is more anomalous) and `is_anomaly` per row. Needs numeric features
without missing values, before any train/test split.
"""

from sklearn.ensemble import IsolationForest

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.unsupervised import data_matrix, write_anomalies


def detect(inp, out, params):
    contamination = params.get("contamination", "auto")
    n_estimators = int(params.get("n_estimators", 200))
    random_state = int(params.get("random_state", 42))
    if contamination != "auto" and not (isinstance(contamination, (int, float)) and 0 < contamination <= 0.5):
        raise ServiceError(f"contamination must be 'auto' or a fraction in (0, 0.5], got {contamination!r}")
    _, _, values = data_matrix(inp, standardize=False)
    model = IsolationForest(n_estimators=n_estimators, contamination=contamination,
                            random_state=random_state).fit(values)
    write_anomalies(out, -model.score_samples(values), model.predict(values) == -1, "Isolation forest anomalies",
                    {"score_threshold": float(-model.offset_)})


if __name__ == "__main__":
    run_service(detect)
