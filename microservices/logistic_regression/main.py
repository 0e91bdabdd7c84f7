"""Train a logistic regression classifier on the training table and predict the test table with probabilities.

Needs numeric features without missing values (encode and impute first); scaled features converge faster.
Under a pipeline's model search it tunes the regularisation strength C on the training rows.
"""

from sklearn.linear_model import LogisticRegression

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.models import numeric_features, ranked
from dagsmith_kit.supervised import tune_fit_and_predict


def classifier(params):
    return LogisticRegression(
        C=float(params.get("C", 1.0)),
        max_iter=int(params.get("max_iter", 1000)),
        class_weight=params.get("class_weight", None),
    )


def space(trial):
    return {"C": trial.suggest_float("C", 1e-3, 100.0, log=True)}


def train(inp, out, params):
    if float(params.get("C", 1.0)) <= 0:
        raise ServiceError(f"C (inverse regularisation strength) must be positive, got {params['C']}")
    model, features = tune_fit_and_predict(inp, out, classifier, params, numeric_features(inp), space=space)
    if len(model.classes_) == 2:
        heading, weights = f"towards {model.classes_[1]}", model.coef_[0]
    else:
        heading, weights = "mean absolute over classes", abs(model.coef_).mean(axis=0)
    converged = max(model.n_iter_) < model.max_iter
    note = "" if converged else "\n\nThe solver did not converge: scale the features or raise max_iter."
    out.append_report(f"## Logistic regression\n\nLargest coefficients ({heading}):\n"
                      + ranked(features, weights) + note)


if __name__ == "__main__":
    run_service(train)
