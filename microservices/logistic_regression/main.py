"""Train a logistic regression classifier on the training table and predict the test table with probabilities.

Reads the table as it comes: numbers are standardised with their gaps filled and flagged, text columns one-hot
encoded, all learned on the training rows. Under a pipeline's model search it tunes the regularisation strength C
on the training rows.
"""

from sklearn.linear_model import LogisticRegression

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.models import linear_coefficients, native_features, with_linear_inputs
from dagsmith_kit.supervised import tune_fit_and_predict


def classifier(params):
    return with_linear_inputs(LogisticRegression(
        C=float(params.get("C", 1.0)),
        max_iter=int(params.get("max_iter", 1000)),
        class_weight=params.get("class_weight", None),
    ))


def space(trial):
    return {"C": trial.suggest_float("C", 1e-3, 100.0, log=True)}


def train(inp, out, params):
    if float(params.get("C", 1.0)) <= 0:
        raise ServiceError(f"C (inverse regularisation strength) must be positive, got {params['C']}")
    model, _ = tune_fit_and_predict(inp, out, classifier, params, native_features(inp), space=space)
    fitted = model.named_steps["model"]
    if len(fitted.classes_) == 2:
        heading, weights = f"towards {fitted.classes_[1]}", fitted.coef_[0]
    else:
        heading, weights = "mean absolute over classes", abs(fitted.coef_).mean(axis=0)
    converged = max(fitted.n_iter_) < fitted.max_iter
    note = "" if converged else "\n\nThe solver did not converge: raise max_iter."
    out.append_report(f"## Logistic regression\n\nLargest coefficients ({heading}):\n"
                      + linear_coefficients(model, weights) + note)


if __name__ == "__main__":
    run_service(train)
