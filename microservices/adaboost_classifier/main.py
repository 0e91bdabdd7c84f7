"""Train an AdaBoost classifier (boosted shallow decision trees) on the training table and predict the test table.

Needs numeric features without missing values (encode and impute first). max_depth sets the depth of each
boosted tree (1: decision stumps).
"""

from sklearn.ensemble import AdaBoostClassifier
from sklearn.tree import DecisionTreeClassifier

from dagsmith_kit import ServiceError, fit_and_predict, run_service
from dagsmith_kit.models import numeric_features, ranked


def train(inp, out, params):
    n_estimators = int(params.get("n_estimators", 100))
    learning_rate = float(params.get("learning_rate", 0.5))
    max_depth = int(params.get("max_depth", 1))
    if n_estimators < 1 or learning_rate <= 0 or max_depth < 1:
        raise ServiceError("n_estimators and max_depth must be at least 1 and learning_rate positive, got "
                           f"{n_estimators}, {max_depth} and {learning_rate}")
    model = AdaBoostClassifier(
        estimator=DecisionTreeClassifier(max_depth=max_depth),
        n_estimators=n_estimators,
        learning_rate=learning_rate,
        random_state=int(params.get("random_state", 42)),
    )
    features = fit_and_predict(inp, out, model, numeric_features(inp), params=params)
    out.write_metrics({"boosting_rounds": len(model.estimators_)})
    out.append_report(f"## AdaBoost classifier\n\n{len(model.estimators_)} trees of depth {max_depth}. "
                      "Most important features:\n" + ranked(features, model.feature_importances_, top=5))


if __name__ == "__main__":
    run_service(train)
