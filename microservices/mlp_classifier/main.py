"""Train a multi-layer perceptron (neural network) classifier on standardised features and predict the test table.

hidden_layer_sizes lists the neurons per hidden layer (default [100]). Early stopping (on by default) holds out
10% of the training rows and stops when their score stops improving, which keeps training fast; turn it off
for small tables. Needs numeric features without missing values (encode and impute first). The report says when
training stopped at max_iter before converging.
"""

from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from dagsmith_kit import ServiceError, fit_and_predict, run_service
from dagsmith_kit.models import numeric_features


def train(inp, out, params):
    layers = params.get("hidden_layer_sizes", [100])
    layers = [layers] if isinstance(layers, int) else layers
    if not layers or not all(isinstance(n, int) and n >= 1 for n in layers):
        raise ServiceError(f"hidden_layer_sizes must be a list of positive integers, got {layers!r}")
    max_iter = int(params.get("max_iter", 300))
    mlp = MLPClassifier(
        hidden_layer_sizes=tuple(layers),
        alpha=float(params.get("alpha", 0.0001)),
        learning_rate_init=float(params.get("learning_rate_init", 0.001)),
        max_iter=max_iter,
        early_stopping=bool(params.get("early_stopping", True)),
        random_state=int(params.get("random_state", 42)),
    )
    model = Pipeline([("scale", StandardScaler()), ("mlp", mlp)])
    fit_and_predict(inp, out, model, numeric_features(inp), params=params)
    converged = mlp.n_iter_ < max_iter
    out.write_metrics({"epochs": int(mlp.n_iter_), "final_loss": float(mlp.loss_)})
    note = "" if converged else " Training stopped at max_iter before converging: raise max_iter."
    out.append_report(f"## Neural network (MLP) classifier\n\nHidden layers {list(layers)}, "
                      f"{mlp.n_iter_} epochs, final training loss {mlp.loss_:.4f}.{note}")


if __name__ == "__main__":
    run_service(train)
