"""Fit a supervised estimator on ``train`` and predict ``test``: the part every model service shares."""

from __future__ import annotations

from typing import Any

import pandas as pd

from dagsmith_kit.bundle import Bundle


def fit_and_predict(inp: Bundle, out: Bundle, model: Any, features: list[str] | None = None) -> list[str]:
    """Fit ``model`` on the training table, write ``model.joblib`` and ``predictions.parquet``.

    Classifiers that can give probabilities also get one ``proba_<label>`` column per class.
    Returns the feature columns used (all non-target, non-id columns unless given).
    """
    target = inp.require_target()
    train, test = inp.table("train"), inp.table("test")
    features = features or inp.feature_columns(train)
    model.fit(train[features], train[target])
    predictions = pd.DataFrame({"prediction": model.predict(test[features])})
    if hasattr(model, "predict_proba") and hasattr(model, "classes_"):
        proba = model.predict_proba(test[features])
        for i, label in enumerate(model.classes_):
            predictions[f"proba_{label}"] = proba[:, i]
    out.save_model(model)
    out.write_predictions(predictions)
    out.write_metrics({"train_rows": len(train), "n_features": len(features)})
    return features
