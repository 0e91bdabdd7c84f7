"""Score cluster labels (predictions' `cluster`) on the data table's numeric features: silhouette,
Calinski-Harabasz and Davies-Bouldin (noise rows, -1, left out); with a target as reference labels also
adjusted Rand index and normalized mutual information.
"""

import numpy as np
from sklearn.metrics import (adjusted_rand_score, calinski_harabasz_score, davies_bouldin_score,
                             normalized_mutual_info_score)

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.unsupervised import cluster_labels, data_matrix, silhouette


def evaluate(inp, out, params):
    standardize = bool(params.get("standardize", True))
    data, _, values = data_matrix(inp, standardize=standardize, min_rows=2)
    labels = cluster_labels(inp.predictions(), data)
    keep = labels != -1
    if not 2 <= len(np.unique(labels[keep])) < keep.sum():
        raise ServiceError(f"internal scores need at least 2 clusters (not counting noise) and fewer clusters "
                           f"than clustered rows; got {len(np.unique(labels[keep]))}")
    metrics = {"silhouette": silhouette(values, labels),
               "calinski_harabasz": calinski_harabasz_score(values[keep], labels[keep]),
               "davies_bouldin": davies_bouldin_score(values[keep], labels[keep]),
               "noise_fraction": 1.0 - keep.mean()}
    if inp.target and inp.target in data.columns:
        known = data[inp.target].notna().to_numpy()
        reference = data[inp.target].astype(str).to_numpy()[known]
        metrics["adjusted_rand"] = adjusted_rand_score(reference, labels[known])
        metrics["normalized_mutual_info"] = normalized_mutual_info_score(reference, labels[known])
    out.write_metrics({k: float(v) for k, v in metrics.items()})
    out.append_report("## Clustering metrics\n\n" + "\n".join(f"- {k}: {v:.4f}" for k, v in metrics.items()))


if __name__ == "__main__":
    run_service(evaluate)
