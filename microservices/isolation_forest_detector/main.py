"""Score every row of the data table for anomalies with an isolation forest on its numeric features.

Writes `anomaly_score` (higher is more anomalous),
`is_anomaly` (the `contamination` fraction of rows when the goal gives one, else the rows beyond the upper
fence of the scores, 1-5% of the table) and `why` (the values that make a flagged row unusual) per row.
Needs numeric features without missing values, before any train/test split.
"""

from sklearn.ensemble import IsolationForest

from dagsmith_kit import run_service
from dagsmith_kit.anomalies import write_anomalies
from dagsmith_kit.unsupervised import data_matrix


def detect(inp, out, params):
    contamination = params.get("contamination", "auto")
    n_estimators = int(params.get("n_estimators", 200))
    random_state = int(params.get("random_state", 42))
    data, columns, values = data_matrix(inp, standardize=False)
    model = IsolationForest(n_estimators=n_estimators, random_state=random_state).fit(values)
    write_anomalies(out, data, columns, -model.score_samples(values), "Isolation forest anomalies", contamination)


if __name__ == "__main__":
    run_service(detect)
