"""Classify each test row by a vote of its nearest training rows, after standardising the features.

Needs numeric features without missing values (encode and impute first); scaling is done internally.
"""

from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from dagsmith_kit import ServiceError, fit_and_predict, run_service
from dagsmith_kit.models import numeric_features


def train(inp, out, params):
    n_neighbors = int(params.get("n_neighbors", 5))
    weights = params.get("weights", "uniform")
    features = numeric_features(inp)
    rows = len(inp.table("train"))
    if not 1 <= n_neighbors <= rows:
        raise ServiceError(f"n_neighbors must be between 1 and the {rows} training rows, got {n_neighbors}")
    model = Pipeline([
        ("scale", StandardScaler()),
        ("knn", KNeighborsClassifier(n_neighbors=n_neighbors, weights=weights)),
    ])
    fit_and_predict(inp, out, model, features, params=params)


if __name__ == "__main__":
    run_service(train)
