"""Train a histogram gradient boosting classifier on the training table and predict the test table.

Handles missing values and text (categorical) feature columns natively: no imputation or encoding needed.
Under a pipeline's model search it tunes learning rate, leaf count and regularisation on the training rows.
"""

from sklearn.ensemble import HistGradientBoostingClassifier

from dagsmith_kit import run_service
from dagsmith_kit.models import hist_boosting_summary, native_features, with_native_categories
from dagsmith_kit.params import declared
from dagsmith_kit.supervised import tune_fit_and_predict


def booster(params):
    return with_native_categories(HistGradientBoostingClassifier(**declared(
        params, learning_rate=0.1, max_iter=200, max_leaf_nodes=31, min_samples_leaf=20, l2_regularization=0.0,
        class_weight=None, early_stopping="auto", random_state=42), categorical_features="from_dtype"))


def space(trial):
    return {"learning_rate": trial.suggest_float("learning_rate", 0.02, 0.3, log=True),
            "max_leaf_nodes": trial.suggest_int("max_leaf_nodes", 4, 128, log=True),
            "min_samples_leaf": trial.suggest_int("min_samples_leaf", 5, 100, log=True),
            "l2_regularization": trial.suggest_float("l2_regularization", 1e-4, 300.0, log=True)}


def train(inp, out, params):
    model, _ = tune_fit_and_predict(inp, out, booster, params, native_features(inp), space=space)
    iterations, summary = hist_boosting_summary(model)
    out.write_metrics({"boosting_iterations": iterations})
    out.append_report(f"## Gradient boosting classifier\n\n{summary}")


if __name__ == "__main__":
    run_service(train)
