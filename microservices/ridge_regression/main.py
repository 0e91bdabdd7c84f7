"""Fit an L2-regularised (ridge) linear regression on the training table and predict the test target.

Needs numeric features without missing values and a numeric target; alpha sets the regularisation strength.
Under a pipeline's model search it tunes alpha on the training rows.
"""

from sklearn.linear_model import Ridge

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.models import numeric_features, ranked
from dagsmith_kit.supervised import tune_fit_and_predict


def ridge(params):
    return Ridge(alpha=float(params.get("alpha", 1.0)))


def space(trial):
    return {"alpha": trial.suggest_float("alpha", 1e-3, 100.0, log=True)}


def train(inp, out, params):
    if float(params.get("alpha", 1.0)) < 0:
        raise ServiceError(f"alpha must be zero or positive, got {params['alpha']}")
    features = numeric_features(inp, regression=True)
    model, features = tune_fit_and_predict(inp, out, ridge, params, features, space=space)
    out.append_report(f"## Ridge regression (alpha {model.alpha:g})\n\nLargest coefficients:\n"
                      + ranked(features, model.coef_))


if __name__ == "__main__":
    run_service(train)
