"""Cluster the rows of the data table with k-means on standardized numeric features.

With n_clusters "auto" it tries every k from 2 to max_clusters and keeps the one with the best silhouette.
Needs numeric features without missing values, before any train/test split.
"""

from sklearn.cluster import KMeans

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.unsupervised import data_matrix, silhouette, write_clusters


def cluster(inp, out, params):
    n_clusters = params.get("n_clusters", "auto")
    max_clusters = int(params.get("max_clusters", 10))
    random_state = int(params.get("random_state", 42))
    n_init = int(params.get("n_init", 10))
    _, _, values = data_matrix(inp, standardize=True)
    if isinstance(n_clusters, str) and n_clusters.isdigit():
        n_clusters = int(n_clusters)
    if n_clusters == "auto":
        candidates = range(2, min(max_clusters, len(values) - 1) + 1)
    elif isinstance(n_clusters, int) and 1 <= n_clusters <= len(values):
        candidates = [n_clusters]
    else:
        raise ServiceError(f"n_clusters must be 'auto' or an integer between 1 and {len(values)}, got {n_clusters!r}")
    if not candidates:
        raise ServiceError(f"max_clusters must be at least 2 to choose k automatically, got {max_clusters}")
    best = None
    for k in candidates:
        model = KMeans(n_clusters=k, n_init=n_init, random_state=random_state).fit(values)
        score = silhouette(values, model.labels_)
        score = -1.0 if score is None else score
        if best is None or score > best[0]:
            best = (score, model)
    model = best[1]
    write_clusters(out, values, model.labels_, f"K-means clustering (k={model.n_clusters})",
                   {"inertia": float(model.inertia_), "chosen_k": model.n_clusters})


if __name__ == "__main__":
    run_service(cluster)
