"""The doubt of an answer too good to be true (``execution.doubt``) on a forecast, which is meant to learn from its
time."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dagsmith.execution.doubt import review
from dagsmith.execution.quality import Quality
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
    assert review(quality, _forecast(tmp_path, frame), ["day", "close"], drivers, classification=False) is None
    copied = frame.assign(adjusted=frame["close"] * 0.98)
    doubted = review(quality, _forecast(tmp_path / "copied", copied), ["day", "adjusted", "close"],
                     [{"feature": "adjusted", "importance": 1.0}], classification=False)
    assert doubted and doubted.startswith("`adjusted` alone decides `close`"), doubted
