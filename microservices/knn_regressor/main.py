"""Predict each test row's target as the average of its nearest training rows, after standardising the features.

Needs numeric features without missing values and a numeric target; scaling is done internally.
"""

from sklearn.neighbors import KNeighborsRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from dagsmith_kit import ServiceError, fit_and_predict, run_service
from dagsmith_kit.models import numeric_features


def train(inp, out, params):
    n_neighbors = int(params.get("n_neighbors", 10))
    features = numeric_features(inp, regression=True)
    if n_neighbors < 1 or n_neighbors > len(inp.table("train")):
        raise ServiceError(f"n_neighbors must be at least 1 and at most the number of training rows, got {n_neighbors}")
    knn = KNeighborsRegressor(n_neighbors=n_neighbors, weights=params.get("weights", "distance"))
    fit_and_predict(inp, out, Pipeline([("scale", StandardScaler()), ("knn", knn)]), features, params=params)


if __name__ == "__main__":
    run_service(train)
