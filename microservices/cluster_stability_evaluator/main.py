"""How stable a clustering is under resampling, judged from its labels alone (no re-clustering): for each of
n_resamples bootstrap samples of the clustered rows (numpy's default_rng(random_state)), the centroid of
every cluster is recomputed from the sample and every row is reassigned to its nearest centroid; the
reassignment is compared with the original labels by the adjusted Rand index, the share of rows keeping
their label, and per cluster the Jaccard overlap of its members. Stable, well-separated clusters score near
1. Also reports the agreement when the centroids come from all rows (1 for a converged k-means).

Works on the data table's numeric features (standardized unless standardize is false), before a split;
noise rows (-1) are left out. Needs at least 2 clusters and no missing values.
"""

import numpy as np
from sklearn.metrics import adjusted_rand_score

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import markdown_table
from dagsmith_kit.unsupervised import cluster_labels, data_matrix


def _nearest(values, members, labels, clusters):
    """Each row's nearest centroid, the centroids computed from ``members`` (rows of a cluster absent from it
    have no centroid)."""
    present = [c for c in clusters if (labels[members] == c).any()]
    centroids = np.array([values[members][labels[members] == c].mean(axis=0) for c in present])
    distances = (centroids**2).sum(axis=1)[None, :] - 2 * values @ centroids.T  # squared, less |row|^2
    return np.asarray(present)[distances.argmin(axis=1)]


def evaluate_stability(inp, out, params):
    n_resamples = int(params.get("n_resamples", 50))
    random_state = int(params.get("random_state", 42))
    standardize = bool(params.get("standardize", True))
    if not 1 <= n_resamples <= 1000:
        raise ServiceError(f"n_resamples must be between 1 and 1000, got {n_resamples}")
    data, _, values = data_matrix(inp, standardize=standardize, min_rows=4)
    labels = cluster_labels(inp.predictions(), data)
    keep = labels != -1
    values, labels = values[keep], labels[keep]
    clusters = sorted(set(labels.tolist()))
    if len(clusters) < 2:
        raise ServiceError(f"stability needs at least 2 clusters (not counting noise), got {len(clusters)}")
    rng = np.random.default_rng(random_state)
    ari, agreement, jaccard = [], [], {c: [] for c in clusters}
    for _ in range(n_resamples):
        sample = rng.integers(0, len(labels), len(labels))
        assigned = _nearest(values, sample, labels, clusters)
        ari.append(adjusted_rand_score(labels, assigned))
        agreement.append(np.mean(assigned == labels))
        for c in clusters:
            jaccard[c].append(np.sum((labels == c) & (assigned == c)) / np.sum((labels == c) | (assigned == c)))
    full = _nearest(values, np.arange(len(labels)), labels, clusters)
    metrics = {"stability.ari_mean": np.mean(ari), "stability.ari_min": np.min(ari),
               "stability.agreement_mean": np.mean(agreement),
               "stability.full_data_agreement": np.mean(full == labels),
               **{f"stability.jaccard.{c}": np.mean(jaccard[c]) for c in clusters}}
    out.write_metrics({k: float(v) for k, v in metrics.items()})
    rows = [[c, int((labels == c).sum()), np.mean(jaccard[c])] for c in clusters]
    out.append_report(f"## Cluster stability ({n_resamples} bootstrap resamples)\n\n"
                      f"Mean adjusted Rand index {metrics['stability.ari_mean']:.4f} (worst "
                      f"{metrics['stability.ari_min']:.4f}); rows keeping their cluster: "
                      f"{metrics['stability.agreement_mean']:.1%}.\n\n"
                      + markdown_table(["cluster", "rows", "mean Jaccard"], rows))


if __name__ == "__main__":
    run_service(evaluate_stability)
