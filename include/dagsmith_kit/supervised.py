"""Fit a supervised estimator on ``train`` and predict ``test``: the part every model service shares.

When the step's params carry a ``search`` (see ``dagsmith_kit.search``), the model is validated on the training
rows first (and tuned, for services that name a search space), and refused when it does no better than a
trivial predictor.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from dagsmith_kit.bundle import Bundle, prediction_frame
from dagsmith_kit.cleaning import time_values
from dagsmith_kit.folds import groups_of


def fit_and_predict(inp: Bundle, out: Bundle, model: Any, features: list[str] | None = None, *,
                    params: dict[str, Any] | None = None) -> list[str]:
    """Fit ``model`` on the training table, write ``model.joblib`` and ``predictions.parquet``.

    Classifiers that can give probabilities also get one ``proba_<label>`` column per class. With ``params``
    holding a search, the model is first scored by cross-validation beside a trivial predictor.
    Returns the feature columns used (all non-target, non-id columns unless given).
    """
    from sklearn.base import clone

    return tune_fit_and_predict(inp, out, lambda _: clone(model), params or {}, features, space=None,
                                fitted=model)[1]


def tune_fit_and_predict(inp: Bundle, out: Bundle, build, params: dict[str, Any], features: list[str] | None = None,
                         *, space=None, fitted: Any = None) -> tuple[Any, list[str]]:
    """Build the model from ``params`` (``build(params)``), searching ``space`` first when the params carry a
    search; fit it on the training table and predict the test table as ``fit_and_predict`` does.

    Returns the fitted model and the feature columns (when the search chose to model log(target), or a forecast's
    change from its value a horizon back, it is fitted on that and the saved model wraps it to predict on the
    target's scale). ``fitted`` is the instance to fit in the end (so a caller's references to its parts stay valid);
    by default ``build`` makes it.
    """
    from dagsmith_kit import search as searching
    from dagsmith_kit.log_target import LogTarget
    from dagsmith_kit.past_change import PastChange

    target = inp.require_target()
    train, test = inp.table("train"), inp.table("test")
    features = features or inp.feature_columns(train)
    past = inp.meta.get("naive_forecast") if inp.forecasts else None  # a forecast's value a horizon back
    timeless = tuple(c for c in inp.meta.get("trend_features") or [] if c in features)

    def anchor(model: Any) -> PastChange:
        return PastChange(model, past, timeless)

    plan = searching.Search.from_params(params, out.path)
    chosen = params
    if plan is not None:
        outcome = searching.tune(build, params, space, train[features], train[target], plan, time_order(inp, train),
                                 groups=groups_of(inp, train),
                                 anchor=anchor if past in features else None)
        searching.require_better_than_baseline(outcome, plan.metric)
        chosen = outcome.params
    model = fitted if fitted is not None and chosen == params else build(chosen)
    predictor = model
    if plan is not None and outcome.log_target:
        predictor = LogTarget(model)
    elif plan is not None and outcome.past_change:
        predictor = anchor(model)
    predictor.fit(train[features], train[target])  # a LogTarget or PastChange fits ``model`` itself
    out.save_model(predictor, {"kind": "regressor" if inp.predicts_numbers else "classifier", "features": features})
    out.write_predictions(prediction_frame(predictor, test[features]))
    out.write_metrics({"train_rows": len(train), "n_features": len(features)})
    if plan is not None:
        searching.record(out, plan, outcome, features)
    return model, features


def time_order(inp: Bundle, table: pd.DataFrame) -> pd.Series | None:
    """The rows' times when the model forecasts along the bundle's time column (dates parsed), else None."""
    column = inp.time_column
    if not inp.forecasts or not column or column not in table.columns:
        return None
    times = time_values(table[column])
    return None if times.isna().any() else times.reset_index(drop=True)

