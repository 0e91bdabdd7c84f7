"""Train a histogram gradient boosting regressor on the training table and predict the test target.

Handles missing values and text (categorical) feature columns natively; needs a numeric target.
Under a pipeline's model search it tunes learning rate, depth, leaf size and regularisation on the training rows.
"""

from sklearn.ensemble import HistGradientBoostingRegressor

from dagsmith_kit import run_service
from dagsmith_kit.models import hist_boosting_summary, native_features, with_native_categories
from dagsmith_kit.params import declared
from dagsmith_kit.supervised import tune_fit_and_predict


def booster(params):
    return with_native_categories(HistGradientBoostingRegressor(**declared(
        params, loss="squared_error", learning_rate=0.05, max_iter=200, max_depth=3, min_samples_leaf=20,
        l2_regularization=0.0, random_state=42), categorical_features="from_dtype"))


def space(trial):
    return {"learning_rate": trial.suggest_float("learning_rate", 0.02, 0.3, log=True),
            "max_depth": trial.suggest_categorical("max_depth", [3, 5, 8, None]),
            "min_samples_leaf": trial.suggest_int("min_samples_leaf", 5, 100, log=True),
            "l2_regularization": trial.suggest_float("l2_regularization", 1e-4, 10.0, log=True)}


def train(inp, out, params):
    model, _ = tune_fit_and_predict(inp, out, booster, params, native_features(inp, regression=True), space=space)
    iterations, summary = hist_boosting_summary(model, f"{model.named_steps['model'].loss} loss")
    out.write_metrics({"boosting_iterations": iterations})
    out.append_report(f"## Gradient boosting regressor\n\n{summary}")


if __name__ == "__main__":
    run_service(train)
