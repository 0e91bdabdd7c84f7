"""Train a LightGBM gradient boosted trees classifier on the training table and predict the test table.

Handles missing values and text (categorical) feature columns natively: text columns become pandas categories
learned from the training table (a column's 255 commonest values at most), so no imputation or encoding is needed.
LightGBM refuses feature names holding JSON characters ([ ] { } " : ,).
Under a pipeline's model search it tunes rounds, learning rate, leaves, bins and regularisation on the training rows.
"""

from lightgbm import LGBMClassifier

from dagsmith_kit import run_service
from dagsmith_kit.models import lightgbm_features, lightgbm_settings, lightgbm_space, lightgbm_summary
from dagsmith_kit.models import with_native_categories
from dagsmith_kit.params import declared
from dagsmith_kit.supervised import tune_fit_and_predict


def booster(params):
    return with_native_categories(LGBMClassifier(**lightgbm_settings(declared(
        params, n_estimators=200, learning_rate=0.05, num_leaves=31, min_child_samples=20, colsample_bytree=1.0,
        reg_lambda=0.0, max_bin=255, class_weight=None, random_state=42, n_jobs=1))))


def train(inp, out, params):
    features = lightgbm_features(inp)
    model, _ = tune_fit_and_predict(inp, out, booster, params, features, space=lightgbm_space)
    rounds, summary = lightgbm_summary(model, features)
    out.write_metrics({"boosting_rounds": rounds})
    out.append_report(f"## LightGBM classifier\n\n{summary}")


if __name__ == "__main__":
    run_service(train)
