"""Train a LightGBM gradient boosted trees classifier on the training table and predict the test table.

Handles missing values and text (categorical) feature columns natively: text columns become pandas categories
learned from the training table (a column's 255 commonest values at most), so no imputation or encoding is needed.
LightGBM refuses feature names holding JSON characters ([ ] { } " : ,).
Under a pipeline's model search it tunes rounds, learning rate, leaves and regularisation on the training rows.
"""

from lightgbm import LGBMClassifier

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.models import (
    lightgbm_features,
    lightgbm_space,
    native_categories_note,
    ranked,
    with_native_categories,
)
from dagsmith_kit.supervised import tune_fit_and_predict


def booster(params):
    return with_native_categories(LGBMClassifier(
        n_estimators=int(params.get("n_estimators", 200)),
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
    ))


def train(inp, out, params):
    features = lightgbm_features(inp)
    if int(params.get("n_estimators", 200)) < 1:
        raise ServiceError(f"n_estimators must be at least 1, got {params['n_estimators']}")
    model, _ = tune_fit_and_predict(inp, out, booster, params, features, space=lightgbm_space)
    fitted = model.named_steps["model"]
    out.write_metrics({"boosting_rounds": int(fitted.n_estimators_)})
    out.append_report(f"## LightGBM classifier\n\n{fitted.n_estimators_} boosting rounds. "
                      f"{native_categories_note(model)} Largest gains:\n"
                      + ranked(features, fitted.feature_importances_, top=5))


if __name__ == "__main__":
    run_service(train)
