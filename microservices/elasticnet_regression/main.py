"""Fit an elastic net (mixed L1 and L2 penalty) linear regression and predict the test target.

l1_ratio blends the penalties (1: lasso, 0: ridge). Features and target are standardised inside the model, so
alpha is independent of the target's scale. Needs numeric features without missing values and a numeric target.
"""

from sklearn.compose import TransformedTargetRegressor
from sklearn.linear_model import ElasticNet
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from dagsmith_kit import ServiceError, fit_and_predict, run_service
from dagsmith_kit.models import numeric_features, ranked


def train(inp, out, params):
    alpha = float(params.get("alpha", 0.01))
    l1_ratio = float(params.get("l1_ratio", 0.5))
    if alpha <= 0:
        raise ServiceError(f"alpha must be positive (use linear_regression for no penalty), got {alpha}")
    if not 0 <= l1_ratio <= 1:
        raise ServiceError(f"l1_ratio must be between 0 and 1, got {l1_ratio}")
    net = ElasticNet(alpha=alpha, l1_ratio=l1_ratio, max_iter=int(params.get("max_iter", 5000)))
    scaled = Pipeline([("scale", StandardScaler()), ("net", net)])
    model = TransformedTargetRegressor(regressor=scaled, transformer=StandardScaler())
    features = fit_and_predict(inp, out, model, numeric_features(inp, regression=True), params=params)
    coefficients = model.regressor_.named_steps["net"].coef_
    kept = int((coefficients != 0).sum())
    out.write_metrics({"nonzero_coefficients": kept})
    out.append_report(f"## Elastic net (alpha {alpha:g}, l1_ratio {l1_ratio:g})\n\n{kept} of {len(features)} "
                      "features kept. Largest standardised coefficients:\n" + ranked(features, coefficients))


if __name__ == "__main__":
    run_service(train)
