"""Train a linear classifier with stochastic gradient descent on standardised features and predict the test table.

loss "log_loss" (logistic regression, the default) and "modified_huber" give class probabilities; "hinge" (a
linear SVM) gives labels only. Needs numeric features without missing values; scales well to large tables.
"""

from sklearn.linear_model import SGDClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from dagsmith_kit import fit_and_predict, run_service
from dagsmith_kit.models import numeric_features
from dagsmith_kit.params import one_of

LOSSES = ("log_loss", "modified_huber", "hinge")
PENALTIES = ("l2", "l1", "elasticnet")


def train(inp, out, params):
    loss = one_of("loss", params.get("loss", "log_loss"), LOSSES)
    penalty = one_of("penalty", params.get("penalty", "l2"), PENALTIES)
    sgd = SGDClassifier(
        loss=loss,
        penalty=penalty,
        alpha=float(params.get("alpha", 0.001)),
        max_iter=int(params.get("max_iter", 1000)),
        class_weight=params.get("class_weight", None),
        random_state=int(params.get("random_state", 42)),
    )
    model = Pipeline([("scale", StandardScaler()), ("sgd", sgd)])
    fit_and_predict(inp, out, model, numeric_features(inp), params=params)
    out.write_metrics({"epochs": int(sgd.n_iter_)})
    note = "" if loss != "hinge" else " The hinge loss gives no probabilities: only labels are predicted."
    out.append_report(f"## SGD linear classifier\n\n{loss} loss, {penalty} penalty, {sgd.n_iter_} epochs.{note}")


if __name__ == "__main__":
    run_service(train)
