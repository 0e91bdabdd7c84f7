"""Train a LightGBM gradient boosted trees regressor on the training table and predict the test target.

Handles missing values and text (categorical) feature columns natively (a column's 255 commonest values at most);
needs a numeric target. objective is regression (squared error), regression_l1, huber or poisson (which needs
a non-negative target).
Under a pipeline's model search it tunes rounds, learning rate, leaves, bins and regularisation on the training rows.
"""

from lightgbm import LGBMRegressor

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.models import lightgbm_features, lightgbm_settings, lightgbm_space, lightgbm_summary
from dagsmith_kit.models import with_native_categories
from dagsmith_kit.params import declared, one_of
from dagsmith_kit.supervised import tune_fit_and_predict

OBJECTIVES = ("regression", "regression_l1", "huber", "poisson")


def booster(params):
    return with_native_categories(LGBMRegressor(**lightgbm_settings(declared(
        params, objective="regression", n_estimators=300, learning_rate=0.05, num_leaves=31, min_child_samples=20,
        colsample_bytree=1.0, reg_lambda=0.0, max_bin=255, random_state=42, n_jobs=1))))


def train(inp, out, params):
    features = lightgbm_features(inp, regression=True)
    objective = one_of("objective", params.get("objective", "regression"), OBJECTIVES)
    if objective == "poisson" and (inp.table("train")[inp.target] < 0).any():
        raise ServiceError("the poisson objective needs a non-negative target; use objective 'regression'")
    model, _ = tune_fit_and_predict(inp, out, booster, params, features, space=lightgbm_space)
    rounds, summary = lightgbm_summary(model, features, f"{objective} objective")
    out.write_metrics({"boosting_rounds": rounds})
    out.append_report(f"## LightGBM regressor\n\n{summary}")


if __name__ == "__main__":
    run_service(train)
