"""Fit an ordinary least squares linear regression on the training table and predict the test target.

Needs numeric features without missing values and a numeric target.
"""

from sklearn.linear_model import LinearRegression

from dagsmith_kit import fit_and_predict, run_service
from dagsmith_kit.models import numeric_features, ranked


def train(inp, out, params):
    model = LinearRegression(fit_intercept=bool(params.get("fit_intercept", True)))
    features = fit_and_predict(inp, out, model, numeric_features(inp, regression=True), params=params)
    out.append_report(f"## Linear regression\n\nIntercept {model.intercept_:.4g}; largest coefficients:\n"
                      + ranked(features, model.coef_))


if __name__ == "__main__":
    run_service(train)
