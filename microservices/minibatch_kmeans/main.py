"""Cluster the rows of the data table with mini-batch k-means on standardized numeric features.

Mini-batch k-means updates the centroids from small random batches, so it stays fast on tables with hundreds
of thousands of rows. The number of clusters is n_clusters, or with "auto" (the default) the k from 2 to
max_clusters with the best silhouette. Needs numeric
features without missing values, before any train/test split.
"""

from sklearn.cluster import MiniBatchKMeans

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.unsupervised import clusters_by_silhouette, data_matrix, write_clusters


def cluster(inp, out, params):
    batch_size = int(params.get("batch_size", 1024))
    if batch_size < 1:
        raise ServiceError(f"batch_size must be at least 1, got {batch_size}")
    data, columns, values = data_matrix(inp, standardize=True)
    models = {}

    def fit(k):
        models[k] = MiniBatchKMeans(n_clusters=k, batch_size=batch_size, n_init=int(params.get("n_init", 3)),
                                    random_state=int(params.get("random_state", 42))).fit(values)
        return models[k].labels_

    k, labels, chosen = clusters_by_silhouette(values, fit, params.get("n_clusters", "auto"),
                                            int(params.get("max_clusters", 10)))
    model = models[k]
    write_clusters(out, data, columns, values, labels, f"Mini-batch k-means clustering (k={model.n_clusters})",
                   {"inertia": float(model.inertia_), "batches_seen": int(model.n_steps_)}, chosen=chosen,
                   model=model)


if __name__ == "__main__":
    run_service(cluster)
