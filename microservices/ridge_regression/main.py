"""Fit an L2-regularised (ridge) linear regression on the training table and predict the test target.

Reads the table as it comes (numbers standardised with their gaps filled and flagged, text columns one-hot encoded,
all learned on the training rows) and needs a numeric target; alpha sets the regularisation strength.
Under a pipeline's model search it tunes alpha on the training rows.
"""

from sklearn.linear_model import Ridge

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.models import linear_coefficients, native_features, with_linear_inputs
from dagsmith_kit.supervised import tune_fit_and_predict


def ridge(params):
    return with_linear_inputs(Ridge(alpha=float(params.get("alpha", 1.0))))


def space(trial):
    return {"alpha": trial.suggest_float("alpha", 1e-3, 100.0, log=True)}


def train(inp, out, params):
    if float(params.get("alpha", 1.0)) < 0:
        raise ServiceError(f"alpha must be zero or positive, got {params['alpha']}")
    model, _ = tune_fit_and_predict(inp, out, ridge, params, native_features(inp, regression=True), space=space)
    fitted = model.named_steps["model"]
    out.append_report(f"## Ridge regression (alpha {fitted.alpha:g})\n\nLargest coefficients:\n"
                      + linear_coefficients(model, fitted.coef_))


if __name__ == "__main__":
    run_service(train)
