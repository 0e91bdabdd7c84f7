"""Fit an L1-regularised (lasso) linear regression and predict the test target; the lasso drops weak features.

Features and target are standardised inside the model, so alpha means the same for targets of any scale
(larger alpha: fewer features kept). Needs numeric features without missing values and a numeric target.
"""

from sklearn.compose import TransformedTargetRegressor
from sklearn.linear_model import Lasso
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from dagsmith_kit import ServiceError, fit_and_predict, run_service
from dagsmith_kit.models import numeric_features, ranked


def train(inp, out, params):
    alpha = float(params.get("alpha", 0.01))
    if alpha <= 0:
        raise ServiceError(f"alpha must be positive (use linear_regression for no penalty), got {alpha}")
    lasso = Lasso(alpha=alpha, max_iter=int(params.get("max_iter", 5000)))
    scaled = Pipeline([("scale", StandardScaler()), ("lasso", lasso)])
    model = TransformedTargetRegressor(regressor=scaled, transformer=StandardScaler())
    features = fit_and_predict(inp, out, model, numeric_features(inp, regression=True), params=params)
    coefficients = model.regressor_.named_steps["lasso"].coef_
    kept = [name for name, weight in zip(features, coefficients) if weight != 0]
    out.write_metrics({"nonzero_coefficients": len(kept)})
    out.append_report(f"## Lasso regression (alpha {alpha:g})\n\n{len(kept)} of {len(features)} features kept. "
                      "Largest standardised coefficients:\n" + ranked(features, coefficients))


if __name__ == "__main__":
    run_service(train)
