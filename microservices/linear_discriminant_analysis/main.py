"""Train a linear discriminant analysis (LDA) classifier on the training table and predict the test table.

LDA models each class as a Gaussian with a shared covariance, which gives linear class boundaries and class
probabilities. shrinkage ("auto" or 0..1) regularises the covariance and needs solver lsqr or eigen. Needs
numeric features without missing values.
"""

from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

from dagsmith_kit import ServiceError, fit_and_predict, run_service
from dagsmith_kit.models import numeric_features
from dagsmith_kit.params import one_of

SOLVERS = ("svd", "lsqr", "eigen")


def train(inp, out, params):
    solver = one_of("solver", params.get("solver", "svd"), SOLVERS)
    shrinkage = params.get("shrinkage", None)
    if shrinkage is not None and solver == "svd":
        raise ServiceError("shrinkage needs solver 'lsqr' or 'eigen'; the svd solver does not support it")
    if shrinkage not in (None, "auto") and not (isinstance(shrinkage, (int, float)) and 0 <= shrinkage <= 1):
        raise ServiceError(f"shrinkage must be null, 'auto' or a number between 0 and 1, got {shrinkage!r}")
    model = LinearDiscriminantAnalysis(solver=solver, shrinkage=shrinkage)
    fit_and_predict(inp, out, model, numeric_features(inp), params=params)
    priors = ", ".join(f"{label}: {prior:.3f}" for label, prior in zip(model.classes_, model.priors_))
    text = f"## Linear discriminant analysis ({solver} solver)\n\nClass priors: {priors}."
    if hasattr(model, "explained_variance_ratio_"):
        ratios = ", ".join(f"{r:.1%}" for r in model.explained_variance_ratio_)
        text += f" Between-class variance along the discriminant axes: {ratios}."
    out.append_report(text)


if __name__ == "__main__":
    run_service(train)
