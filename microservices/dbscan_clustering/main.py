"""Density-based clustering (DBSCAN) of the data table's standardized numeric features; noise rows get -1.

With eps "auto", eps is the knee of the sorted k-distance curve (k = min_samples): the point farthest from
the straight line joining the curve's first and last points. Needs numeric features without missing values.
"""

import numpy as np
from sklearn.cluster import DBSCAN
from sklearn.neighbors import NearestNeighbors

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.unsupervised import data_matrix, write_clusters


def knee_eps(values, k):
    distances = np.sort(NearestNeighbors(n_neighbors=k).fit(values).kneighbors(values)[0][:, -1])
    x = np.linspace(0.0, 1.0, len(distances))
    y = (distances - distances[0]) / max(distances[-1] - distances[0], 1e-12)
    return float(distances[np.argmax(x - y)])


def cluster(inp, out, params):
    eps = params.get("eps", "auto")
    min_samples = int(params.get("min_samples", 5))
    data, columns, values = data_matrix(inp, standardize=True)
    if not 1 <= min_samples <= len(values):
        raise ServiceError(f"min_samples must be between 1 and the number of rows ({len(values)}), got {min_samples}")
    how = "as given"
    if eps == "auto":
        eps, how = knee_eps(values, min_samples), "the knee of the sorted neighbour distances"
    elif not isinstance(eps, (int, float)) or eps <= 0:
        raise ServiceError(f"eps must be 'auto' or a positive number, got {eps!r}")
    labels = DBSCAN(eps=max(float(eps), 1e-9), min_samples=min_samples).fit_predict(values)
    write_clusters(out, data, columns, values, labels, "DBSCAN clustering",
                   {"eps": float(eps), "min_samples": min_samples},
                   chosen=f"found by density (eps {float(eps):.3g}: {how}; min_samples {min_samples})")


if __name__ == "__main__":
    run_service(cluster)
