"""Train a LightGBM gradient boosted trees regressor on the training table and predict the test target.

Handles missing values and text (categorical) feature columns natively (a column's 255 commonest values at most);
needs a numeric target. objective is regression (squared error), regression_l1, huber or poisson (which needs
a non-negative target).
Under a pipeline's model search it tunes rounds, learning rate, leaves and regularisation on the training rows.
"""

from lightgbm import LGBMRegressor

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.models import (
    lightgbm_features,
    lightgbm_space,
    native_categories_note,
    ranked,
    with_native_categories,
)
from dagsmith_kit.supervised import tune_fit_and_predict

OBJECTIVES = ("regression", "regression_l1", "huber", "poisson")


def booster(params):
    return with_native_categories(LGBMRegressor(
        objective=params.get("objective", "regression"),
        n_estimators=int(params.get("n_estimators", 300)),
        learning_rate=float(params.get("learning_rate", 0.05)),
        num_leaves=int(params.get("num_leaves", 31)),
        min_child_samples=int(params.get("min_child_samples", 20)),
        colsample_bytree=float(params.get("colsample_bytree", 1.0)),
        reg_lambda=float(params.get("reg_lambda", 0.0)),
        importance_type="gain",
        random_state=int(params.get("random_state", 42)),
        n_jobs=int(params.get("n_jobs", 1)),
        verbose=-1,
    ))


def train(inp, out, params):
    features = lightgbm_features(inp, regression=True)
    objective = params.get("objective", "regression")
    if objective not in OBJECTIVES:
        raise ServiceError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    if objective == "poisson" and (inp.table("train")[inp.target] < 0).any():
        raise ServiceError("the poisson objective needs a non-negative target; use objective 'regression'")
    model, _ = tune_fit_and_predict(inp, out, booster, params, features, space=lightgbm_space)
    fitted = model.named_steps["model"]
    out.write_metrics({"boosting_rounds": int(fitted.n_estimators_)})
    out.append_report(f"## LightGBM regressor\n\n{fitted.n_estimators_} boosting rounds ({objective} objective). "
                      f"{native_categories_note(model)} Largest gains:\n"
                      + ranked(features, fitted.feature_importances_, top=5))


if __name__ == "__main__":
    run_service(train)
