"""Soft clustering with a Gaussian mixture on the data table's standardized numeric features.

Writes each row's most likely component as `cluster` and its membership probability as `probability`,
plus BIC/AIC to metrics. Needs numeric features without missing values, before any train/test split.
"""

from sklearn.mixture import GaussianMixture

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.unsupervised import data_matrix, write_clusters

COVARIANCES = ("full", "tied", "diag", "spherical")


def cluster(inp, out, params):
    n_components = int(params.get("n_components", 3))
    covariance_type = params.get("covariance_type", "full")
    random_state = int(params.get("random_state", 42))
    if covariance_type not in COVARIANCES:
        raise ServiceError(f"covariance_type must be one of {', '.join(COVARIANCES)}, got {covariance_type!r}")
    _, _, values = data_matrix(inp, standardize=True)
    if not 1 <= n_components <= len(values):
        raise ServiceError(f"n_components must be between 1 and the number of rows ({len(values)}), got {n_components}")
    model = GaussianMixture(n_components=n_components, covariance_type=covariance_type, n_init=3,
                            reg_covar=1e-5, random_state=random_state).fit(values)
    proba = model.predict_proba(values)
    write_clusters(out, values, proba.argmax(axis=1), f"Gaussian mixture ({covariance_type} covariance)",
                   {"bic": float(model.bic(values)), "aic": float(model.aic(values)),
                    "converged": bool(model.converged_)}, extra={"probability": proba.max(axis=1)})


if __name__ == "__main__":
    run_service(cluster)
