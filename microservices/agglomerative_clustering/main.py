"""Hierarchical (agglomerative) clustering of the data table's standardized numeric features.

It needs memory quadratic in the number of rows, so tables above max_rows are refused. Needs numeric
features without missing values, before any train/test split.
"""

from sklearn.cluster import AgglomerativeClustering

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.unsupervised import data_matrix, write_clusters

LINKAGES = ("ward", "complete", "average", "single")


def cluster(inp, out, params):
    n_clusters = int(params.get("n_clusters", 3))
    linkage = params.get("linkage", "ward")
    max_rows = int(params.get("max_rows", 10000))
    if linkage not in LINKAGES:
        raise ServiceError(f"linkage must be one of {', '.join(LINKAGES)}, got {linkage!r}")
    _, _, values = data_matrix(inp, standardize=True, max_rows=max_rows)
    if not 2 <= n_clusters <= len(values):
        raise ServiceError(f"n_clusters must be between 2 and the number of rows ({len(values)}), got {n_clusters}")
    labels = AgglomerativeClustering(n_clusters=n_clusters, linkage=linkage).fit_predict(values)
    write_clusters(out, values, labels, f"Agglomerative clustering ({linkage} linkage)")


if __name__ == "__main__":
    run_service(cluster)
