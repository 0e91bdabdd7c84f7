"""Train a support vector classifier (with probability estimates) on standardised features and predict the test table.

Needs numeric features without missing values; refuses training tables above max_rows since SVMs scale badly.
The probabilities are the SVM's scores calibrated by Platt's sigmoid on internal cross-validation folds.
"""

from sklearn.calibration import CalibratedClassifierCV
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from dagsmith_kit import ServiceError, fit_and_predict, run_service
from dagsmith_kit.models import numeric_features


def train(inp, out, params):
    max_rows = int(params.get("max_rows", 10000))
    features = numeric_features(inp)
    rows = len(inp.table("train"))
    if rows > max_rows:
        raise ServiceError(f"an SVM on {rows} training rows would be too slow (max_rows is {max_rows}); "
                           "use a linear or tree model, or sample the data first")
    svc = SVC(
        C=float(params.get("C", 1.0)),
        kernel=params.get("kernel", "rbf"),
        gamma=params.get("gamma", "scale"),
        random_state=int(params.get("random_state", 42)),
    )
    model = Pipeline([("scale", StandardScaler()), ("svc", CalibratedClassifierCV(svc, ensemble=False))])
    fit_and_predict(inp, out, model, features, params=params)
    fitted = model.named_steps["svc"].calibrated_classifiers_[0].estimator
    out.write_metrics({"support_vectors": int(fitted.n_support_.sum())})


if __name__ == "__main__":
    run_service(train)
