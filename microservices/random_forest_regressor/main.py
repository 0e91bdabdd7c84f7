"""Train a random forest regressor on the training table and predict the test target.

Each tree learns from a bootstrap sample of the rows and splits on the best threshold among the features. Needs
numeric features without missing values (encode and impute first) and a numeric target. Under a pipeline's model
search it tunes leaf size, features per split and depth on the training rows.
"""

from sklearn.ensemble import RandomForestRegressor

from dagsmith_kit import run_service
from dagsmith_kit.models import forest_step
from dagsmith_kit.params import declared


def forest(params):
    return RandomForestRegressor(**declared(params, n_estimators=300, max_depth=None, min_samples_leaf=1,
                                            max_features=None, random_state=42, n_jobs=1))


if __name__ == "__main__":
    run_service(forest_step(forest, "Random forest regressor", regression=True))
