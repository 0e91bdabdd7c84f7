"""Flag rows of the data table far from the bulk of the data under a robust Gaussian model (elliptic envelope:
minimum covariance determinant estimate of the centre and covariance).

Writes `anomaly_score` (the robust Mahalanobis distance),
`is_anomaly` and `why` per row, flagged by the rule every detector shares (docs/bundle-format.md).
Assumes roughly Gaussian, unimodal data. Needs numeric features without missing values or
constant columns, and more than twice as many rows as features, before any train/test split.
"""

import numpy as np
from sklearn.covariance import EllipticEnvelope

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.anomalies import write_anomalies
from dagsmith_kit.unsupervised import data_matrix


def detect(inp, out, params):
    contamination = params.get("contamination", "auto")
    data, columns, values = data_matrix(inp, standardize=False)
    constant = [c for c in columns if data[c].nunique() <= 1]
    if constant:
        raise ServiceError("the covariance is singular with constant columns; drop them first: "
                           f"{', '.join(constant[:5])}")
    if len(values) <= 2 * len(columns):
        raise ServiceError(f"a robust covariance of {len(columns)} features needs more than {2 * len(columns)} rows, "
                           f"the table has {len(values)}; reduce the features first")
    model = EllipticEnvelope(support_fraction=params.get("support_fraction", None),
                             random_state=int(params.get("random_state", 42))).fit(values)
    write_anomalies(out, data, columns, np.sqrt(model.mahalanobis(values)), "Elliptic envelope anomalies",
                    contamination, values=values, score=lambda new: np.sqrt(model.mahalanobis(new)))


if __name__ == "__main__":
    run_service(detect)
