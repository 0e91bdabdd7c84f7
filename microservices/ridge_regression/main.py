"""Fit an L2-regularised (ridge) linear regression on the training table and predict the test target.

Needs numeric features without missing values and a numeric target; alpha sets the regularisation strength.
"""

from sklearn.linear_model import Ridge

from dagsmith_kit import ServiceError, fit_and_predict, run_service
from dagsmith_kit.models import numeric_features, ranked


def train(inp, out, params):
    alpha = float(params.get("alpha", 1.0))
    if alpha < 0:
        raise ServiceError(f"alpha must be zero or positive, got {alpha}")
    model = Ridge(alpha=alpha)
    features = fit_and_predict(inp, out, model, numeric_features(inp, regression=True))
    out.append_report(f"## Ridge regression (alpha {alpha:g})\n\nLargest coefficients:\n"
                      + ranked(features, model.coef_))


if __name__ == "__main__":
    run_service(train)
