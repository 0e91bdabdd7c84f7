"""Replace the numeric features with truncated SVD components, without centring or scaling the data.

Suits non-negative, sparse-like features (counts, TF-IDF, one-hot). Learns from the training table only;
needs n_components below the number of numeric features and no missing values.
"""

from sklearn.decomposition import TruncatedSVD

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.unsupervised import reduce_tables


def reduce(inp, out, params):
    n_components = int(params.get("n_components", 2))
    n_iter = int(params.get("n_iter", 5))
    random_state = int(params.get("random_state", 42))

    def make_model(n_rows, n_features):
        if not 1 <= n_components < n_features:
            raise ServiceError(f"n_components must be at least 1 and below the number of numeric "
                               f"features ({n_features}), got {n_components}")
        return TruncatedSVD(n_components=n_components, n_iter=n_iter, random_state=random_state)

    reduce_tables(inp, out, make_model)


if __name__ == "__main__":
    run_service(reduce)
