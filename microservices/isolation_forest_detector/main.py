"""Score every row of the data table for anomalies with an isolation forest on its numeric features.

Writes `anomaly_score` (higher is more anomalous),
`is_anomaly` and `why` per row, flagged by the rule every detector shares (docs/bundle-format.md).
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
    write_anomalies(out, data, columns, -model.score_samples(values), "Isolation forest anomalies", contamination,
                    values=values, score=lambda new: -model.score_samples(new))


if __name__ == "__main__":
    run_service(detect)
