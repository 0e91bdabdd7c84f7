"""Spectral clustering of the data table's standardized numeric features: clusters are read from the
eigenvectors of a nearest-neighbour (or RBF) similarity graph, so they can have any shape.

It builds an n-by-n affinity matrix, so tables above max_rows (default 3,000) are refused. Needs numeric
features without missing values, before any train/test split.
"""

from sklearn.cluster import SpectralClustering

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.unsupervised import data_matrix, write_clusters

AFFINITIES = ("nearest_neighbors", "rbf")


def cluster(inp, out, params):
    n_clusters = int(params.get("n_clusters", 3))
    affinity = params.get("affinity", "nearest_neighbors")
    n_neighbors = int(params.get("n_neighbors", 20))
    max_rows = int(params.get("max_rows", 3000))
    if affinity not in AFFINITIES:
        raise ServiceError(f"affinity must be one of {', '.join(AFFINITIES)}, got {affinity!r}")
    _, _, values = data_matrix(inp, standardize=True, max_rows=max_rows)
    if not 2 <= n_clusters < len(values):
        raise ServiceError(f"n_clusters must be at least 2 and below the number of rows ({len(values)}), got {n_clusters}")
    if not 1 <= n_neighbors < len(values):
        raise ServiceError(f"n_neighbors must be between 1 and the number of rows minus one, got {n_neighbors}")
    model = SpectralClustering(n_clusters=n_clusters, affinity=affinity, n_neighbors=n_neighbors,
                               assign_labels="cluster_qr", random_state=int(params.get("random_state", 42)))
    labels = model.fit_predict(values)
    write_clusters(out, values, labels, f"Spectral clustering ({affinity} affinity)")


if __name__ == "__main__":
    run_service(cluster)
