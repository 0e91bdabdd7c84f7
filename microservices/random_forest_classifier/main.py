"""Train a random forest classifier on the training table and predict the test table.

Each tree learns from a bootstrap sample of the rows and splits on the best threshold among a random subset of the
features. Needs numeric features without missing values (encode and impute first). Under a pipeline's model search
it tunes leaf size, features per split and depth on the training rows.
"""

from sklearn.ensemble import RandomForestClassifier

from dagsmith_kit import run_service
from dagsmith_kit.models import forest_step
from dagsmith_kit.params import declared


def forest(params):
    return RandomForestClassifier(**declared(params, n_estimators=200, max_depth=None, min_samples_leaf=1,
                                             max_features="sqrt", class_weight=None, random_state=42, n_jobs=1))


if __name__ == "__main__":
    run_service(forest_step(forest, "Random forest"))
