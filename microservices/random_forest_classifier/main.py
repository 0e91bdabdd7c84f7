"""Train a random forest classifier on the training table and predict the test table.

Needs numeric features without missing values (encode and impute first).
"""

from sklearn.ensemble import RandomForestClassifier

from dagsmith_kit import fit_and_predict, run_service


def train(inp, out, params):
    model = RandomForestClassifier(
        n_estimators=int(params.get("n_estimators", 200)),
        max_depth=params.get("max_depth", None),
        min_samples_leaf=int(params.get("min_samples_leaf", 1)),
        class_weight=params.get("class_weight", None),
        random_state=int(params.get("random_state", 42)),
        n_jobs=int(params.get("n_jobs", 1)),
    )
    features = fit_and_predict(inp, out, model)
    ranked = sorted(zip(model.feature_importances_, features), reverse=True)[:5]
    out.append_report("## Random forest\n\nMost important features: " + ", ".join(name for _, name in ranked))


if __name__ == "__main__":
    run_service(train)
