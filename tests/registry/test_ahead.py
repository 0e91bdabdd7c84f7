"""The forecast past the data in the answer's words: its first values and its last, of the first series when there
are several (the columns before the time tell the series apart; those after it are what they decide)."""

from __future__ import annotations

import pandas as pd

from dagsmith.registry.ahead import said


def test_one_series_is_named_by_its_first_values_and_its_last():
    forecast = pd.DataFrame({"month": [f"2026-{m:02d}-01" for m in range(1, 7)],
                             "prediction": [1200.0, 1250.5, 1301.0, 1290.0, 1310.0, 1333.3]})
    assert said(forecast, "sales", "month") == (
        "The forecast of sales past the data (forecast.csv, the next 6 times: 1,200 at 2026-01-01, 1,250 at "
        "2026-02-01, 1,301 at 2026-03-01, ... 1,333 at 2026-06-01).")


def test_several_series_are_counted_and_the_first_is_named():
    forecast = pd.DataFrame({"store": ["north"] * 2 + ["south"] * 2, "region": ["n"] * 2 + ["s"] * 2,
                             "day": ["2026-01-05", "2026-01-06"] * 2, "weekday": ["Monday", "Tuesday"] * 2,
                             "prediction": [3.5, 4.25, 30.0, 31.0]})
    assert said(forecast, "visits", "day") == (
        "The forecast of visits past the data (forecast.csv, the next 2 times of each of 2 series; store north, "
        "region n: 3.5 at 2026-01-05, 4.25 at 2026-01-06).")
