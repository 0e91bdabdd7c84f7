"""Train a support vector regressor on standardised features and a standardised target, and predict the test target.

Needs numeric features without missing values and a numeric target; refuses more than max_rows training rows.
"""

from sklearn.compose import TransformedTargetRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR

from dagsmith_kit import ServiceError, fit_and_predict, run_service
from dagsmith_kit.models import numeric_features


def train(inp, out, params):
    features = numeric_features(inp, regression=True)
    max_rows = int(params.get("max_rows", 10000))
    if len(inp.table("train")) > max_rows:
        raise ServiceError(f"SVR fitting grows quadratically with rows; the training table exceeds max_rows={max_rows}")
    svr = SVR(
        kernel=params.get("kernel", "rbf"),
        C=float(params.get("C", 1.0)),
        epsilon=float(params.get("epsilon", 0.1)),
        gamma=params.get("gamma", "scale"),
    )
    # epsilon is in units of the standardised target, so one default suits targets of any scale
    scaled_svr = Pipeline([("scale", StandardScaler()), ("svr", svr)])
    model = TransformedTargetRegressor(regressor=scaled_svr, transformer=StandardScaler())
    fit_and_predict(inp, out, model, features, params=params)


if __name__ == "__main__":
    run_service(train)
