"""Replace the numeric features with non-negative matrix factorisation (NMF) components.

NMF writes each row as a non-negative mix of n_components parts, which suits counts, intensities and
compositions. It refuses negative values (use a min-max scaler first) and missing values. Learns from the
training table only; target, id and non-numeric columns are kept.
"""

from sklearn.decomposition import NMF

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.unsupervised import numeric_features, reduce_tables


def reduce(inp, out, params):
    n_components = int(params.get("n_components", 2))
    max_iter = int(params.get("max_iter", 500))
    random_state = int(params.get("random_state", 42))
    for name, frame in inp.tables().items():
        columns = numeric_features(inp, frame)
        negative = [c for c in columns if (frame[c] < 0).any()]
        if negative:
            raise ServiceError(f"NMF refuses negative values, found in the {name} table in {', '.join(negative[:5])}; "
                               "rescale them to be non-negative first (e.g. min-max scaling)")

    def make_model(n_rows, n_features):
        if not 1 <= n_components <= n_features:
            raise ServiceError(f"n_components must be between 1 and the number of numeric features ({n_features}), "
                               f"got {n_components}")
        return NMF(n_components=n_components, init="nndsvda", max_iter=max_iter, random_state=random_state)

    model = reduce_tables(inp, out, make_model)
    out.write_metrics({"reconstruction_error": float(model.reconstruction_err_), "iterations": int(model.n_iter_)})


if __name__ == "__main__":
    run_service(reduce)
