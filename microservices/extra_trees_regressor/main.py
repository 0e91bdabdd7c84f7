"""Train an extremely randomised trees (extra trees) regressor on the training table and predict the test target.

Needs numeric features without missing values (encode and impute first) and a numeric target.
"""

from sklearn.ensemble import ExtraTreesRegressor

from dagsmith_kit import ServiceError, fit_and_predict, run_service
from dagsmith_kit.models import numeric_features, ranked


def train(inp, out, params):
    n_estimators = int(params.get("n_estimators", 200))
    if n_estimators < 1:
        raise ServiceError(f"n_estimators must be at least 1, got {n_estimators}")
    model = ExtraTreesRegressor(
        n_estimators=n_estimators,
        max_depth=params.get("max_depth", None),
        min_samples_leaf=int(params.get("min_samples_leaf", 1)),
        max_features=params.get("max_features", 1.0),
        random_state=int(params.get("random_state", 42)),
        n_jobs=int(params.get("n_jobs", 1)),
    )
    features = fit_and_predict(inp, out, model, numeric_features(inp, regression=True))
    out.append_report("## Extra trees regressor\n\nMost important features:\n"
                      + ranked(features, model.feature_importances_, top=5))


if __name__ == "__main__":
    run_service(train)
