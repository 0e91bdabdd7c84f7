"""Fill missing numeric features from the k nearest training rows (KNNImputer, on standardised features so
no column dominates the distance); other feature columns get their most frequent training value.
"""

from sklearn.impute import KNNImputer
from sklearn.preprocessing import StandardScaler

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.cleaning import impute_tables


class ScaledKNNImputer:
    """KNNImputer that measures distances on standardised columns and returns values in original units."""

    def __init__(self, imputer, scale):
        self.imputer, self.scaler = imputer, StandardScaler() if scale else None

    def fit(self, x):
        self.imputer.fit(self.scaler.fit_transform(x) if self.scaler else x)
        return self

    def transform(self, x):
        if not self.scaler:
            return self.imputer.transform(x)
        return self.scaler.inverse_transform(self.imputer.transform(self.scaler.transform(x)))


def impute(inp, out, params):
    n_neighbors = int(params.get("n_neighbors", 5))
    if n_neighbors < 1:
        raise ServiceError(f"n_neighbors must be at least 1, got {n_neighbors}")
    knn = KNNImputer(n_neighbors=n_neighbors, weights=params.get("weights", "uniform"))
    impute_tables(inp, out, ScaledKNNImputer(knn, bool(params.get("scale", True))))


if __name__ == "__main__":
    run_service(impute)
