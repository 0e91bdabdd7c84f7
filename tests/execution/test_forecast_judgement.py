"""A forecast judged (``execution.quality``) and doubted (``execution.doubt``): against the naive forecast too, and
learning from its own time without doubt."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dagsmith.execution.doubt import review
from dagsmith.execution.quality import Quality, regression_quality
from dagsmith_kit import Bundle


def _forecast(tmp_path, frame: pd.DataFrame) -> Bundle:
    bundle = Bundle.create(tmp_path / "model", target="close", task_type="time_series_forecasting",
                           time_column="day")
    bundle.write_table("train", frame)
    return bundle


def test_a_forecasts_time_is_no_leak_but_a_copy_of_its_target_is(tmp_path):
    """A trend read from the date on shuffled rows is interpolation between neighbouring days, which would 'decide'
    any smooth series; a column copying the target still decides it."""
    rng = np.random.default_rng(2)
    days = pd.date_range("2000-01-03", periods=2000, freq="D")
    close = np.cumsum(rng.normal(0.5, 5, len(days))) + 1000
    frame = pd.DataFrame({"day": days.strftime("%Y-%m-%d"), "day_year": days.year, "day_month": days.month,
                          "close": close}).sample(frac=1, random_state=0)  # as a split may leave them
    drivers = [{"feature": "day_year", "importance": 0.95}, {"feature": "day_month", "importance": 0.01}]
    quality = Quality(valid=True, metrics={"r2": 0.4})
    assert review(quality, _forecast(tmp_path, frame), frame[["day", "close"]], drivers, classification=False) is None
    copied = frame.assign(adjusted=frame["close"] * 0.98)
    doubted = review(quality, _forecast(tmp_path / "copied", copied), copied[["day", "adjusted", "close"]],
                     [{"feature": "adjusted", "importance": 1.0}], classification=False)
    assert doubted and doubted.startswith("`adjusted` alone decides `close`"), doubted


def test_a_forecast_is_judged_against_the_better_of_the_mean_and_the_latest_value():
    """A share price wanders: its latest value forecasts the months after it far better than its long-run mean, and a
    forecast that beats only the mean is no answer. A seasonal series around a level is the other way round."""
    held_out, trained = pd.Series([101.0, 103.0, 99.0, 104.0]), pd.Series([20.0, 45.0, 70.0, 100.0])
    drifting = pd.Series([90.0, 92.0, 91.0, 93.0])  # far better than the mean (56), worse than the latest (100)
    judged = regression_quality(held_out, drifting, trained, latest=100.0)
    assert not judged.valid and judged.problem.startswith("no better than predicting the latest value"), judged
    assert regression_quality(held_out, drifting, trained).valid  # beside the mean alone it looked like an answer
    seasonal = regression_quality(pd.Series([8.0, 12.0, 8.0, 12.0]), pd.Series([8.5, 11.0, 8.5, 11.0]),
                                  pd.Series([8.0, 12.0, 8.0, 12.0]), latest=12.0)
    assert seasonal.valid and seasonal.metrics["baseline_rmse"] == 2.0  # the mean (10) misses by 2, the latest by 2.83


def test_a_forecast_from_its_past_is_judged_against_the_value_a_horizon_back_and_its_past_is_no_leak(tmp_path):
    """A drifting random walk forecast a step ahead scores R² near 1 from its value the step before, and so does that
    value alone: the task is that easy, not leaked; what counts is beating it."""
    rng = np.random.default_rng(4)
    walk = pd.Series(np.cumsum(rng.normal(1, 1, 3000)) + 500)  # a drifting walk: a wide held-out range
    back = walk.shift(1).bfill()
    held_out, naive = walk.iloc[2500:], ("the value 1 step earlier", back.iloc[2500:])
    copying = regression_quality(held_out, back.iloc[2500:] - 0.5, walk.iloc[:2500], naive=naive)
    assert not copying.valid and copying.problem.startswith("no better than predicting the value 1 step earlier")
    assert copying.metrics["baseline_r2"] > 0.995
    better = held_out * 0.3 + back.iloc[2500:] * 0.7
    judged = regression_quality(held_out, better, walk.iloc[:2500], naive=naive)
    assert judged.valid and judged.metrics["r2"] > judged.metrics["baseline_r2"] > 0.995
    frame = pd.DataFrame({"day": pd.date_range("2001-01-01", periods=2500).strftime("%Y-%m-%d"),
                          "close": walk.iloc[:2500], "close_lag_1": back.iloc[:2500]})
    model = _forecast(tmp_path, frame)
    model.meta["past_features"] = ["close_lag_1"]
    drivers = [{"feature": "close_lag_1", "importance": 1.0}]
    assert review(judged, model, frame[["day", "close"]], drivers, classification=False) is None


def test_a_forecast_learns_the_change_over_its_horizon_and_predicts_beyond_the_levels_it_saw():
    """A tree of the level stops at the highest level it saw; a tree of the change over the horizon follows a trend."""
    from sklearn.tree import DecisionTreeRegressor

    from dagsmith_kit.past_change import PastChange

    level = np.arange(200, dtype=float) * 2
    X = pd.DataFrame({"level_lag_5": np.r_[np.zeros(5), level[:-5]]})
    fitted = PastChange(DecisionTreeRegressor(random_state=0), "level_lag_5").fit(X.iloc[5:150], level[5:150])
    assert np.allclose(fitted.predict(X.iloc[150:]), level[150:])
    assert DecisionTreeRegressor(random_state=0).fit(X.iloc[5:150], level[5:150]).predict(X.iloc[150:]).max() < 300
