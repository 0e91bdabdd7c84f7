"""Train a random forest classifier on the training table and predict the test table.

Needs numeric features without missing values (encode and impute first).
"""

import pandas as pd
from sklearn.ensemble import RandomForestClassifier

from dagsmith_kit import run_service


def train(inp, out, params):
    target = inp.require_target()
    train_df, test_df = inp.table("train"), inp.table("test")
    features = inp.feature_columns(train_df)
    model = RandomForestClassifier(
        n_estimators=int(params.get("n_estimators", 200)),
        max_depth=params.get("max_depth", None),
        min_samples_leaf=int(params.get("min_samples_leaf", 1)),
        class_weight=params.get("class_weight", None),
        random_state=int(params.get("random_state", 42)),
        n_jobs=int(params.get("n_jobs", 1)),
    )
    model.fit(train_df[features], train_df[target])
    predictions = pd.DataFrame({"prediction": model.predict(test_df[features])})
    for i, label in enumerate(model.classes_):
        predictions[f"proba_{label}"] = model.predict_proba(test_df[features])[:, i]
    out.save_model(model)
    out.write_predictions(predictions)
    importances = dict(zip(features, model.feature_importances_.round(6).tolist()))
    out.write_metrics({"train_rows": len(train_df), "n_features": len(features)})
    out.append_report("## Random forest\n\nTop features: " + ", ".join(
        sorted(importances, key=importances.get, reverse=True)[:5]))


if __name__ == "__main__":
    run_service(train)
