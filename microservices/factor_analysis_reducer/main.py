"""Replace the numeric features with latent factors from factor analysis on standardized features.

Factor analysis explains the correlations between features by a few shared factors plus per-feature noise;
rotation "varimax" or "quartimax" makes the loadings easier to read. The report lists the features loading
most on each factor. Learns from the training table only; refuses missing values.
"""

import numpy as np
from sklearn.decomposition import FactorAnalysis
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.unsupervised import numeric_features, reduce_tables

ROTATIONS = (None, "varimax", "quartimax")


def reduce(inp, out, params):
    n_components = int(params.get("n_components", 2))
    rotation = params.get("rotation", "varimax")
    if rotation not in ROTATIONS:
        raise ServiceError(f"rotation must be null, 'varimax' or 'quartimax', got {rotation!r}")

    def make_model(n_rows, n_features):
        if not 1 <= n_components < n_features:
            raise ServiceError(f"n_components must be at least 1 and below the number of numeric features "
                               f"({n_features}), got {n_components}")
        # an exact SVD is much faster than the randomized one when there are few features
        analysis = FactorAnalysis(n_components=n_components, rotation=rotation,
                                  svd_method="lapack" if n_features <= 200 else "randomized",
                                  max_iter=int(params.get("max_iter", 1000)),
                                  random_state=int(params.get("random_state", 42)))
        return make_pipeline(StandardScaler(), analysis)

    model = reduce_tables(inp, out, make_model)
    columns = numeric_features(inp, inp.fit_table())
    loadings = model[-1].components_
    lines = []
    for i, factor in enumerate(loadings):
        top = np.argsort(-np.abs(factor))[:3]
        lines.append(f"- component_{i + 1}: " + ", ".join(f"{columns[j]} ({factor[j]:+.2f})" for j in top))
    out.write_metrics({"mean_noise_variance": float(np.mean(model[-1].noise_variance_))})
    out.append_report("Features loading most on each factor:\n\n" + "\n".join(lines))


if __name__ == "__main__":
    run_service(reduce)
