"""Train a random forest classifier on the training table and predict the test table.

Needs numeric features without missing values (encode and impute first).
Under a pipeline's model search it tunes leaf size, features per split and depth on the training rows.
"""

from sklearn.ensemble import RandomForestClassifier

from dagsmith_kit import run_service
from dagsmith_kit.models import forest_space, numeric_features, ranked
from dagsmith_kit.params import declared
from dagsmith_kit.supervised import tune_fit_and_predict


def forest(params):
    return RandomForestClassifier(**declared(params, n_estimators=200, max_depth=None, min_samples_leaf=1,
                                             max_features="sqrt", class_weight=None, random_state=42, n_jobs=1))


def train(inp, out, params):
    features = numeric_features(inp)
    model, features = tune_fit_and_predict(inp, out, forest, params, features, space=forest_space)
    out.append_report("## Random forest\n\nMost important features:\n"
                      + ranked(features, model.feature_importances_, top=5))


if __name__ == "__main__":
    run_service(train)
