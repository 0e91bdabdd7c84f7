"""Spectral clustering of the data table's standardized numeric features: clusters are read from the
eigenvectors of a nearest-neighbour (or RBF) similarity graph, so they can have any shape.

The number of clusters is n_clusters, or with "auto" (the default) the k from 2 to max_clusters with the best
silhouette. It builds an n-by-n affinity matrix, so tables above max_rows (default 3,000) are refused. Needs numeric
features without missing values, before any train/test split.
"""

from sklearn.cluster import SpectralClustering

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.params import one_of
from dagsmith_kit.unsupervised import clusters_by_silhouette, data_matrix, write_clusters

AFFINITIES = ("nearest_neighbors", "rbf")


def cluster(inp, out, params):
    affinity = one_of("affinity", params.get("affinity", "nearest_neighbors"), AFFINITIES)
    n_neighbors = int(params.get("n_neighbors", 20))
    max_rows = int(params.get("max_rows", 3000))
    data, columns, values = data_matrix(inp, standardize=True, max_rows=max_rows)
    if not 1 <= n_neighbors < len(values):
        raise ServiceError(f"n_neighbors must be between 1 and the number of rows minus one, got {n_neighbors}")

    def fit(k):
        return SpectralClustering(n_clusters=k, affinity=affinity, n_neighbors=n_neighbors, assign_labels="cluster_qr",
                                  random_state=int(params.get("random_state", 42))).fit_predict(values)

    _, labels, chosen = clusters_by_silhouette(values, fit, params.get("n_clusters", "auto"),
                                               int(params.get("max_clusters", 10)))
    write_clusters(out, data, columns, values, labels, f"Spectral clustering ({affinity} affinity)", chosen=chosen)


if __name__ == "__main__":
    run_service(cluster)
