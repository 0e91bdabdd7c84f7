"""Train a histogram gradient boosting regressor on the training table and predict the test target.

Handles missing values and text (categorical) feature columns natively; needs a numeric target.
"""

from sklearn.ensemble import HistGradientBoostingRegressor

from dagsmith_kit import fit_and_predict, run_service
from dagsmith_kit.models import native_features, with_native_categories


def train(inp, out, params):
    booster = HistGradientBoostingRegressor(
        loss=params.get("loss", "squared_error"),
        learning_rate=float(params.get("learning_rate", 0.05)),
        max_iter=int(params.get("max_iter", 200)),
        max_depth=params.get("max_depth", 3),
        l2_regularization=float(params.get("l2_regularization", 0.0)),
        random_state=int(params.get("random_state", 42)),
        categorical_features="from_dtype",
    )
    model = with_native_categories(booster)
    fit_and_predict(inp, out, model, native_features(inp, regression=True))
    categorical = list(model.named_steps["categories"].categories_)
    out.write_metrics({"boosting_iterations": booster.n_iter_})
    out.append_report(f"## Gradient boosting regressor\n\n{booster.n_iter_} boosting iterations ({booster.loss} loss). "
                      f"Categorical features used natively: {', '.join(categorical) or 'none'}.")


if __name__ == "__main__":
    run_service(train)
