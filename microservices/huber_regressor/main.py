"""Fit a Huber regression (a linear model robust to outliers in the target) and predict the test target.

Residuals larger than epsilon (in robust standard deviations) get linear instead of squared loss, so a few
wild target values barely move the fit. Features and target are standardised inside the model. Needs numeric
features without missing values and a numeric target.
"""

from sklearn.compose import TransformedTargetRegressor
from sklearn.linear_model import HuberRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from dagsmith_kit import ServiceError, fit_and_predict, run_service
from dagsmith_kit.models import numeric_features, ranked


def train(inp, out, params):
    epsilon = float(params.get("epsilon", 1.35))
    if epsilon < 1.0:
        raise ServiceError(f"epsilon must be at least 1.0, got {epsilon}")
    huber = HuberRegressor(epsilon=epsilon, alpha=float(params.get("alpha", 0.0001)),
                           max_iter=int(params.get("max_iter", 1000)))
    scaled = Pipeline([("scale", StandardScaler()), ("huber", huber)])
    model = TransformedTargetRegressor(regressor=scaled, transformer=StandardScaler())
    features = fit_and_predict(inp, out, model, numeric_features(inp, regression=True), params=params)
    fitted = model.regressor_.named_steps["huber"]
    outliers = int(fitted.outliers_.sum())
    out.write_metrics({"training_outliers": outliers, "outlier_fraction": outliers / len(fitted.outliers_)})
    out.append_report(f"## Huber regression (epsilon {epsilon:g})\n\n{outliers} training rows treated as outliers. "
                      "Largest standardised coefficients:\n" + ranked(features, fitted.coef_))


if __name__ == "__main__":
    run_service(train)
