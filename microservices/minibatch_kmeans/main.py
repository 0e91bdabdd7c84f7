"""Cluster the rows of the data table with mini-batch k-means on standardized numeric features.

Mini-batch k-means updates the centroids from small random batches, so it stays fast on tables with hundreds
of thousands of rows; the number of clusters is fixed by n_clusters (no automatic choice). Needs numeric
features without missing values, before any train/test split.
"""

from sklearn.cluster import MiniBatchKMeans

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.unsupervised import data_matrix, write_clusters


def cluster(inp, out, params):
    n_clusters = int(params.get("n_clusters", 5))
    batch_size = int(params.get("batch_size", 1024))
    _, _, values = data_matrix(inp, standardize=True)
    if not 2 <= n_clusters <= len(values):
        raise ServiceError(f"n_clusters must be between 2 and the number of rows ({len(values)}), got {n_clusters}")
    if batch_size < 1:
        raise ServiceError(f"batch_size must be at least 1, got {batch_size}")
    model = MiniBatchKMeans(n_clusters=n_clusters, batch_size=batch_size, n_init=int(params.get("n_init", 3)),
                            random_state=int(params.get("random_state", 42))).fit(values)
    write_clusters(out, values, model.labels_, f"Mini-batch k-means clustering (k={n_clusters})",
                   {"inertia": float(model.inertia_), "batches_seen": int(model.n_steps_)})


if __name__ == "__main__":
    run_service(cluster)
