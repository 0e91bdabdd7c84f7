"""Train a histogram gradient boosting classifier on the training table and predict the test table.

Handles missing values and text (categorical) feature columns natively: no imputation or encoding needed.
"""

from sklearn.ensemble import HistGradientBoostingClassifier

from dagsmith_kit import fit_and_predict, run_service
from dagsmith_kit.models import native_features, with_native_categories


def train(inp, out, params):
    booster = HistGradientBoostingClassifier(
        learning_rate=float(params.get("learning_rate", 0.1)),
        max_iter=int(params.get("max_iter", 200)),
        max_leaf_nodes=int(params.get("max_leaf_nodes", 31)),
        class_weight=params.get("class_weight", None),
        early_stopping=params.get("early_stopping", "auto"),
        random_state=int(params.get("random_state", 42)),
        categorical_features="from_dtype",
    )
    model = with_native_categories(booster)
    fit_and_predict(inp, out, model, native_features(inp))
    categorical = list(model.named_steps["categories"].categories_)
    out.write_metrics({"boosting_iterations": booster.n_iter_})
    out.append_report(f"## Gradient boosting classifier\n\n{booster.n_iter_} boosting iterations. "
                      f"Categorical features used natively: {', '.join(categorical) or 'none'}.")


if __name__ == "__main__":
    run_service(train)
