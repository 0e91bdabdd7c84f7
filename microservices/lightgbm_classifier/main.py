"""Train a LightGBM gradient boosted trees classifier on the training table and predict the test table.

Handles missing values and text (categorical) feature columns natively: text columns become pandas categories
learned from the training table (at most 255 per column), so no imputation or encoding is needed. LightGBM
refuses feature names holding JSON characters ([ ] { } " : ,).
"""

from lightgbm import LGBMClassifier

from dagsmith_kit import ServiceError, fit_and_predict, run_service
from dagsmith_kit.models import native_features, ranked, with_native_categories

JSON_CHARACTERS = set('[]{}":,')


def train(inp, out, params):
    features = native_features(inp)
    awkward = [c for c in features if set(c) & JSON_CHARACTERS]
    if awkward:
        raise ServiceError("LightGBM refuses feature names with JSON characters ([ ] { } \" : ,); rename these "
                           f"columns first: {', '.join(awkward[:10])}")
    n_estimators = int(params.get("n_estimators", 200))
    if n_estimators < 1:
        raise ServiceError(f"n_estimators must be at least 1, got {n_estimators}")
    booster = LGBMClassifier(
        n_estimators=n_estimators,
        learning_rate=float(params.get("learning_rate", 0.05)),
        num_leaves=int(params.get("num_leaves", 31)),
        min_child_samples=int(params.get("min_child_samples", 20)),
        colsample_bytree=float(params.get("colsample_bytree", 1.0)),
        reg_lambda=float(params.get("reg_lambda", 0.0)),
        class_weight=params.get("class_weight", None),
        importance_type="gain",
        random_state=int(params.get("random_state", 42)),
        n_jobs=int(params.get("n_jobs", 1)),
        verbose=-1,
    )
    model = with_native_categories(booster)
    fit_and_predict(inp, out, model, features)
    categorical = list(model.named_steps["categories"].categories_)
    out.write_metrics({"boosting_rounds": int(booster.n_estimators_)})
    out.append_report(f"## LightGBM classifier\n\n{booster.n_estimators_} boosting rounds. Categorical features "
                      f"used natively: {', '.join(categorical) or 'none'}. Largest gains:\n"
                      + ranked(features, booster.feature_importances_, top=5))


if __name__ == "__main__":
    run_service(train)
