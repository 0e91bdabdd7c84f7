"""Train a Gaussian naive Bayes classifier on the training table and predict the test table with probabilities.

Needs numeric features without missing values (encode and impute first).
"""

from sklearn.naive_bayes import GaussianNB

from dagsmith_kit import fit_and_predict, run_service
from dagsmith_kit.models import numeric_features


def train(inp, out, params):
    model = GaussianNB(var_smoothing=float(params.get("var_smoothing", 1e-9)))
    fit_and_predict(inp, out, model, numeric_features(inp), params=params)
    priors = ", ".join(f"{label}: {prior:.3f}" for label, prior in zip(model.classes_, model.class_prior_))
    out.append_report(f"## Gaussian naive Bayes\n\nClass priors learned from the training table: {priors}")


if __name__ == "__main__":
    run_service(train)
