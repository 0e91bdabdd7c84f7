"""Hierarchical (agglomerative) clustering of the data table's standardized numeric features.

The number of clusters is n_clusters, or with "auto" (the default) the k from 2 to max_clusters with the best
silhouette, cut from one merge tree. It needs memory quadratic in the number of rows, so tables above max_rows
are refused. Needs numeric
features without missing values, before any train/test split.
"""

import tempfile

from sklearn.cluster import AgglomerativeClustering

from dagsmith_kit import run_service
from dagsmith_kit.params import one_of
from dagsmith_kit.unsupervised import clusters_by_silhouette, data_matrix, write_clusters

LINKAGES = ("ward", "complete", "average", "single")


def cluster(inp, out, params):
    linkage = one_of("linkage", params.get("linkage", "ward"), LINKAGES)
    max_rows = int(params.get("max_rows", 10000))
    data, columns, values = data_matrix(inp, standardize=True, max_rows=max_rows)
    with tempfile.TemporaryDirectory() as cache:  # the merge tree is built once and cut at every k tried

        def fit(k):
            return AgglomerativeClustering(n_clusters=k, linkage=linkage, memory=cache,
                                           compute_full_tree=True).fit_predict(values)

        _, labels, chosen = clusters_by_silhouette(values, fit, params.get("n_clusters", "auto"),
                                                   int(params.get("max_clusters", 10)))
    write_clusters(out, data, columns, values, labels, f"Agglomerative clustering ({linkage} linkage)", chosen=chosen)


if __name__ == "__main__":
    run_service(cluster)
