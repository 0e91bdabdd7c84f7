"""Permutation feature importance of the trained model (model.joblib) on the test table: how much the test
score drops when one feature's values are shuffled (scikit-learn's permutation importance, n_repeats
shuffles per feature, the shuffled copies predicted in batches). The score is "accuracy" for classification and
"r2" for regression unless scoring names another scikit-learn scorer. Test rows without a target are left out;
above max_rows test rows a random sample of max_rows rows is used.

Needs the features the model was trained on to be present, numeric and complete in the test table: text
columns are refused (encode them first), as are missing values (impute first).
"""

import numpy as np
from sklearn.metrics import get_scorer

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.explanation import held_out_model
from dagsmith_kit.insight import markdown_table
from dagsmith_kit.permutation import permutation_importance


def evaluate_importance(inp, out, params):
    n_repeats = int(params.get("n_repeats", 5))
    random_state = int(params.get("random_state", 42))
    scoring = params.get("scoring", None) or ("r2" if inp.predicts_numbers else "accuracy")
    top = int(params.get("top", 10))
    max_rows = int(params.get("max_rows", 5000))
    target = inp.require_target()
    if not inp.is_split():
        raise ServiceError("permutation importance is measured on the test table; run a train/test splitter first")
    if n_repeats < 1:
        raise ServiceError(f"n_repeats must be at least 1, got {n_repeats}")
    model, test, features = held_out_model(inp, target)
    text = inp.feature_columns(test[features], numeric=False)
    if text:
        raise ServiceError(f"permutation importance needs numeric test features; encode these columns first: "
                           f"{', '.join(text[:10])}")
    gaps = [c for c in features if test[c].isna().any()]
    if gaps:
        raise ServiceError(f"the test features have missing values in {', '.join(gaps[:10])}; impute them first")
    if len(test) > max_rows:
        test = test.sample(max_rows, random_state=random_state)
    X, y = test[features], test[target]
    result = permutation_importance(model, X, y, get_scorer(scoring), n_repeats=n_repeats, random_state=random_state)
    metrics = {f"permutation_importance.{scoring}": result.baseline}
    for name, mean, std in zip(features, result.means, result.spreads):
        metrics[f"permutation_importance.{name}.mean"] = mean
        metrics[f"permutation_importance.{name}.std"] = std
    out.write_metrics({k: float(v) for k, v in metrics.items()})
    order = np.argsort(-result.means)[:top]
    rows = [[features[i], result.means[i], result.spreads[i]] for i in order]
    out.append_report(f"## Permutation importance ({scoring} drop, {n_repeats} shuffles, {len(X)} test rows)\n\n"
                      + markdown_table(["feature", "mean drop", "std"], rows))


if __name__ == "__main__":
    run_service(evaluate_importance)
