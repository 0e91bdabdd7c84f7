"""Replace the numeric features with principal components (PCA on standardized features).

n_components is a number of components or a fraction of variance to keep (e.g. 0.95). Learns from the
training table only; fails on missing values (impute first). Target, id and non-numeric columns are kept.
"""

from sklearn.decomposition import PCA
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.unsupervised import reduce_tables


def reduce(inp, out, params):
    n_components = params.get("n_components", 0.95)
    standardize = bool(params.get("standardize", True))
    random_state = int(params.get("random_state", 42))

    def make_model(n_rows, n_features):
        limit = min(n_rows, n_features)
        if isinstance(n_components, float) and 0.0 < n_components < 1.0:
            pca = PCA(n_components=n_components, svd_solver="full")
        elif isinstance(n_components, int) and 1 <= n_components <= limit:
            pca = PCA(n_components=n_components, random_state=random_state)
        else:
            raise ServiceError(f"n_components must be an integer between 1 and {limit} or a variance "
                               f"fraction between 0 and 1, got {n_components!r}")
        return make_pipeline(StandardScaler(), pca) if standardize else make_pipeline(pca)

    reduce_tables(inp, out, make_model)


if __name__ == "__main__":
    run_service(reduce)
