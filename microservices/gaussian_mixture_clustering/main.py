"""Soft clustering with a Gaussian mixture on the data table's standardized numeric features.

Writes each row's most likely component as `cluster` and its membership probability as `probability`,
plus BIC/AIC to metrics. The number of components is n_components, or with "auto" (the default) the k from 2
to max_clusters whose clusters have the best silhouette. Needs numeric features without missing values, before
any train/test split.
"""

from sklearn.mixture import GaussianMixture

from dagsmith_kit import run_service
from dagsmith_kit.params import one_of
from dagsmith_kit.unsupervised import clusters_by_silhouette, data_matrix, write_clusters

COVARIANCES = ("full", "tied", "diag", "spherical")


def cluster(inp, out, params):
    covariance_type = one_of("covariance_type", params.get("covariance_type", "full"), COVARIANCES)
    random_state = int(params.get("random_state", 42))
    data, columns, values = data_matrix(inp, standardize=True)
    models = {}

    def fit(k):
        models[k] = GaussianMixture(n_components=k, covariance_type=covariance_type, n_init=3, reg_covar=1e-5,
                                    random_state=random_state).fit(values)
        return models[k].predict(values)

    k, labels, chosen = clusters_by_silhouette(values, fit, params.get("n_components", "auto"),
                                               int(params.get("max_clusters", 10)))
    model = models[k]
    write_clusters(out, data, columns, values, labels, f"Gaussian mixture ({covariance_type} covariance)",
                   {"bic": float(model.bic(values)), "aic": float(model.aic(values)),
                    "converged": bool(model.converged_)},
                   extra={"probability": model.predict_proba(values).max(axis=1)}, chosen=chosen, model=model)


if __name__ == "__main__":
    run_service(cluster)
