"""Cluster the rows of the data table with k-means on standardized numeric features.

With n_clusters "auto" it tries every k from 2 to max_clusters and keeps the one with the best silhouette.
Needs numeric features without missing values, before any train/test split.
"""

from sklearn.cluster import KMeans

from dagsmith_kit import run_service
from dagsmith_kit.unsupervised import clusters_by_silhouette, data_matrix, write_clusters


def cluster(inp, out, params):
    random_state = int(params.get("random_state", 42))
    n_init = int(params.get("n_init", 10))
    data, columns, values = data_matrix(inp, standardize=True)
    models = {}

    def fit(k):
        models[k] = KMeans(n_clusters=k, n_init=n_init, random_state=random_state).fit(values)
        return models[k].labels_

    k, labels, chosen = clusters_by_silhouette(values, fit, params.get("n_clusters", "auto"),
                                            int(params.get("max_clusters", 10)))
    model = models[k]
    write_clusters(out, data, columns, values, labels, f"K-means clustering (k={model.n_clusters})",
                   {"inertia": float(model.inertia_), "chosen_k": model.n_clusters}, chosen=chosen, model=model)


if __name__ == "__main__":
    run_service(cluster)
