"""Forecast features: what a time series knows of its own past `horizon` steps ahead, and its calendar.

A forecast made `horizon` steps ahead knows the target's values up to that many rows back, never later ones. So each
row gets the target lagged by `horizon` and by the `lags` - 1 steps before it (`<target>_lag_<k>`), its value one
season before the time forecast (the same weekday of the week before, the same month of the year before: the smallest
whole number of seasons at least `horizon` back), and its mean over the season ending `horizon` steps back. A table
of several series (times that repeat, told apart by a category such as a store) is lagged within each series. The
time's calendar is added too: the weekday, the month or the hour of a date, where the steps are finer than them, and
the position in its cycle of a numeric time in fractions of a unit (decimal years).

`horizon` is counted in `horizon_unit`s (`step`, `hour`, `day`, `week`, `month`, `quarter` or `year`) and turned
into rows by the table's median time step: 2 years of monthly rows are 24 steps, 30 days of trading days 30 rows.

The first rows of each training series have no past that far back and are left out of the training table. New rows
are lagged from the latest known values (the recorded tail of the series), so a forecast can score the rows up to
`horizon` steps after the last known value; rows further ahead are refused, saying so. The step also records which
rows those are (each series' next `horizon` times at its own step, ``transforms.record``'s ``ahead``), so a run shows
the forecast past its data. The column holding the value
`horizon` steps earlier is the naive forecast every forecast is judged against (`naive_forecast` in the bundle's
meta; `past_features` lists the columns made of the target's past, which are no leak; `trend_features` the time as
a number, which a model of the change over the horizon leaves out; `horizon` says how far ahead, in rows and in the
goal's unit).
"""

import math
from typing import Any

import numpy as np
import pandas as pd

from dagsmith_kit import ServiceError, run_service, transforms
from dagsmith_kit.cleaning import cycle_position, decided_by, repeats, season_features, steps_per_unit, time_values

#: Seconds in each unit a horizon can be counted in (a month and a year on average).
UNIT_SECONDS = {"hour": 3600, "day": 86_400, "week": 7 * 86_400, "month": 30.44 * 86_400,
                "quarter": 91.31 * 86_400, "year": 365.25 * 86_400}
#: The cycles a date's steps can follow, longest first: the calendar part and the steps of about this many seconds
#: it is a cycle for.
CYCLES = (("month", 40 * 86_400), ("day_of_week", 2 * 86_400), ("hour", 2 * 3600))
#: Distinct values a series key may hold at most.
MAX_SERIES = 10_000
#: A step this many times the longest of the training series breaks the series (rows are missing there).
GAP_FACTOR = 1.5
#: Known values of the series a model version keeps to lag the rows it scores.
MAX_HISTORY = 500_000
#: The latest times of a series whose calendar frequency the times past the data follow.
RECENT_TIMES = 60
#: Calendar parts of a date that may decide another column (a weekday's name, a month's season).
CALENDAR_PARTS = ("day_of_week", "day", "month", "quarter", "day_of_year", "hour")


def time_step_seconds(times: pd.Series) -> float | None:
    """The median step between the distinct times, in seconds (decimal years counted as years), or None for a count
    of whole units that are no calendar."""
    distinct = np.sort(times[times == times].unique())  # NaN and NaT are not equal to themselves
    if len(distinct) < 2:
        return None
    if pd.api.types.is_numeric_dtype(times):
        looks_like_years = 1000 <= float(np.min(distinct)) <= 3000
        step = float(np.median(np.diff(distinct.astype(float))))
        return step * UNIT_SECONDS["year"] if looks_like_years else None
    step = float(pd.Series(np.diff(distinct)).median().total_seconds())
    # months and years differ in length: a step near one of them is one (monthly rows step 31 days in the median)
    return next((unit for unit in UNIT_SECONDS.values() if abs(step - unit) <= 0.1 * unit), step)


def season_steps(times: pd.Series, step_seconds: float | None) -> int | None:
    """How many rows make one season of the series (``times`` parsed): 12 months, 7 days (5 on trading days), 24
    hours, 52 weeks, 4 quarters, the steps of a unit of decimal years; None for yearly or irregular steps."""
    if pd.api.types.is_numeric_dtype(times):
        return steps_per_unit(times)
    if step_seconds is None or step_seconds <= 0:
        return None
    days = step_seconds / 86_400
    if days < 1:
        return round(86_400 / step_seconds) if 86_400 % step_seconds == 0 else None
    if days == 1:
        weekdays = times.dt.day_of_week.nunique()
        return 5 if weekdays == 5 else 7
    for cycle, per_year in ((7, 52), (30.44, 12), (91.31, 4)):
        if abs(days - cycle) <= cycle * 0.15:
            return per_year
    return None


def horizon_steps(horizon: float, unit: str, step_seconds: float | None) -> int:
    """The horizon in rows of the table."""
    if unit in ("step", "steps", "period", "periods"):
        return max(1, math.ceil(horizon))
    if unit not in UNIT_SECONDS:
        raise ServiceError(f"horizon_unit must be step or one of {', '.join(UNIT_SECONDS)}, got {unit!r}")
    if not step_seconds:
        raise ServiceError(f"the time column counts plain numbers, so a horizon in {unit}s cannot be turned into "
                           "rows: give it in steps (horizon_unit: step)")
    return max(1, round(horizon * UNIT_SECONDS[unit] / step_seconds))


def series_keys(frame: pd.DataFrame, time: str, features: list[str]) -> list[str]:
    """The columns telling the series apart when times repeat: the fewest non-numeric features that, with the time,
    name every row."""
    keys: list[str] = []
    named = frame[time].nunique()
    if named == len(frame):
        return keys
    for column in sorted(features, key=lambda c: frame[c].nunique()):
        if pd.api.types.is_float_dtype(frame[column]) or frame[column].nunique() > MAX_SERIES:
            continue
        more = frame.groupby([time, *keys, column], dropna=False).ngroups
        if more > named:  # a column the time decides (its weekday) tells no series apart
            keys, named = [*keys, column], more
        if named == len(frame):
            return keys
    raise ServiceError(f"the times of '{time}' repeat and no column tells the series apart, so the target's past "
                       "cannot be followed series by series")


def longest_step(times: pd.Series, series: list[pd.Series]):
    """The longest step between consecutive times of any one series (a Timedelta, or a number of a numeric time)."""
    if not series:
        return times.sort_values().diff().max()
    return times.groupby(series).apply(lambda t: t.sort_values().diff().max()).max()


def lagged(frame: pd.DataFrame, state: dict, *, strict: bool = True) -> pd.DataFrame:
    """``frame`` with the target's past as of ``horizon`` steps back, taken from the frame's own target values and
    the recorded ``history`` around them. ``strict`` refuses rows whose value a horizon back is unknown (new rows
    too far ahead); the training table's first rows have none and are marked instead."""
    target, time, keys, horizon = state["target"], state["time"], state["keys"], state["horizon"]
    own = frame[[*keys, time]].copy()
    own["_t"] = time_values(frame[time])
    own["_y"] = pd.to_numeric(frame[target], errors="coerce") if target in frame.columns else np.nan
    own["_row"] = np.arange(len(frame))
    history = state["history"].assign(_row=-1)
    if len(history):  # a row given again is the history's row: its value, when it comes without one
        on = [*keys, "_t"]
        at = history.set_index(on).index
        known = history["_y"].set_axis(at)[~at.duplicated(keep="last")]
        given = pd.MultiIndex.from_frame(own[on]) if keys else pd.Index(own["_t"])
        own["_y"] = np.where(np.isfinite(own["_y"].to_numpy(dtype=float)), own["_y"],
                             known.reindex(given).to_numpy(dtype=float))
        history = history[~at.isin(given)]
    combined = pd.concat([history, own], ignore_index=True).sort_values([*keys, "_t"], kind="stable")
    # a row counts its lags in rows, so rows missing from the series would pull older values nearer: a step longer
    # than any the training series took starts a stretch whose lags never reach across it
    steps = combined.groupby(keys, sort=False)["_t"].diff() if keys else combined["_t"].diff()
    stretch = (steps > state["longest_step"] * GAP_FACTOR).cumsum()
    groups = [combined[k] for k in keys] + [stretch]
    values = combined["_y"].groupby(groups, sort=False)
    added = {name: values.shift(lag) for name, lag in state["lags"].items()}
    window = state["window"]
    added[state["mean"]] = values.shift(horizon).groupby(groups, sort=False).transform(
        lambda s: s.rolling(window, min_periods=1).mean())
    rows = combined["_row"].to_numpy()
    mine = rows >= 0
    order = np.argsort(rows[mine], kind="stable")
    result = frame.copy()
    for name, column in added.items():
        result[name] = column.to_numpy()[mine][order]
    unknown = ~np.isfinite(result[state["naive"]].to_numpy(dtype=float))
    if strict and unknown.any():
        last = state["history"]["_t"].max() if len(state["history"]) else None
        raise ValueError(f"{int(unknown.sum())} of the rows come more than {horizon} steps after the last known value "
                         f"of '{target}'" + (f" ({last})" if last is not None else "") + f": a forecast {horizon} "
                         f"steps ahead cannot score them; add the values of '{target}' up to {horizon} steps before "
                         "them to the rows")
    return result


def tail(frames: list[pd.DataFrame], state: dict) -> pd.DataFrame:
    """The known values of the series (the latest ``MAX_HISTORY``) from the labelled tables: what lagging rows of any
    time since needs, a run's own held-out rows as well as new ones."""
    target, time, keys = state["target"], state["time"], state["keys"]
    known = pd.concat([f[[*keys, time, target]] for f in frames], ignore_index=True)
    known = known.assign(_t=time_values(known[time]), _y=pd.to_numeric(known[target], errors="coerce"))
    known = known[np.isfinite(known["_y"].to_numpy(dtype=float))]
    latest = known.sort_values("_t", kind="stable").tail(MAX_HISTORY)
    return latest[[*keys, time, "_t", "_y"]].reset_index(drop=True)


def calendar(frame: pd.DataFrame, state: dict) -> pd.DataFrame:
    """The time's calendar parts finer than a season's own cycle and its years as a number (``_trend``: what a trend
    is learnt from); of a numeric time, which is its own trend, the position in the cycle of decimal years."""
    time, cycle = state["time"], state["calendar"]
    if isinstance(cycle, int):
        return frame.assign(**season_features(time, frame[time], cycle))
    if cycle is None:  # a count of whole units (years): the time itself is the trend, with no cycle in it
        return frame
    stamps = time_values(frame[time])
    parts = {f"{time}_{part}": getattr(stamps.dt, part).astype(float) for part in cycle}
    parts[f"{time}_trend"] = (stamps.dt.year + (stamps.dt.day_of_year - 1) / 365.25).astype(float)
    return frame.assign(**parts)


def following(times: pd.Series, count: int) -> pd.Series:
    """The ``count`` times after the latest of one series' ``times``, in their own form, at their own step: the
    calendar frequency the latest times keep (month starts, quarters, weeks), business days for daily rows that skip
    weekends, else the median step."""
    parsed = time_values(times.drop_duplicates()).dropna().sort_values()
    if pd.api.types.is_numeric_dtype(parsed):
        step = float(np.median(np.diff(parsed.to_numpy(dtype=float)))) if len(parsed) > 1 else 1.0
        ahead = float(parsed.iloc[-1]) + step * np.arange(1, count + 1)
        if pd.api.types.is_integer_dtype(times) and step == round(step):
            return pd.Series(ahead.round().astype(times.dtype))
        return pd.Series(ahead.round(3 - math.floor(math.log10(abs(step))) if step else 6))  # 2008.58333, not ...1
    recent = pd.DatetimeIndex(parsed.iloc[-RECENT_TIMES:])
    with pd.option_context("future.infer_freq_returns_offset", True):  # an offset, as pandas 4 gives it
        frequency = pd.infer_freq(recent) if len(recent) >= 3 else None
    if frequency is None:
        step = pd.Series(recent).diff().median() if len(recent) > 1 else pd.Timedelta(days=1)
        weekdays_only = step == pd.Timedelta(days=1) and bool((recent.day_of_week < 5).all())
        frequency = "B" if weekdays_only else step
    ahead = pd.date_range(recent[-1], periods=count + 1, freq=frequency)[1:]
    if pd.api.types.is_datetime64_any_dtype(times):
        return pd.Series(ahead)
    with_time = bool((recent != recent.normalize()).any())
    return pd.Series(ahead.strftime("%Y-%m-%d %H:%M:%S" if with_time else "%Y-%m-%d"))


def deciders(frame: pd.DataFrame, time: str, keys: list[str], season: int | None) -> dict[str, pd.Series]:
    """What a row's time and series decide that new rows will have too: the series keys and the calendar parts of a
    date, or of a numeric time its whole units and its position in a ``season`` of steps (the month of a decimal
    year)."""
    found = {key: frame[key] for key in keys}
    stamps = time_values(frame[time])
    if pd.api.types.is_datetime64_any_dtype(stamps):
        found |= {f"_{part}": getattr(stamps.dt, part) for part in (*CALENDAR_PARTS, "year")}
    elif pd.api.types.is_numeric_dtype(stamps):
        found["_year"] = np.floor(stamps.astype(float))
        if season:
            found["_season"] = cycle_position(stamps.astype(float), season)
    return found


def decided_columns(frame: pd.DataFrame, time: str, keys: list[str], features: list[str],
                    season: int | None) -> dict[str, tuple]:
    """The features a key or a calendar part decides (a weekday's name, a store's region), each as its decider and
    the value of each of the decider's values, or the time's year and the column's offset from it: what the rows
    past the data are given, as the profile read them known ahead (``cleaning.decided_by``, which the profiler uses
    too)."""
    found: dict[str, tuple] = {}
    candidates = deciders(frame, time, keys, season)
    year = candidates.pop("_year", None)
    candidates = {name: values for name, values in candidates.items() if repeats(values)}
    for column in (c for c in features if c not in keys and c != time):
        if year is not None and pd.api.types.is_numeric_dtype(frame[column]) and \
                (offsets := (frame[column] - year).dropna()).nunique() == 1:
            offset = offsets.iloc[0].item()
            whole = pd.api.types.is_integer_dtype(frame[column]) and offset == round(offset)
            found[column] = ("_year", round(offset) if whole else offset)  # an int keeps a column of ints whole
            continue
        decided = next(((name, by) for name, values in candidates.items()
                        if (by := decided_by(values, frame[column])) is not None), None)
        if decided:
            found[column] = decided
    return found


def ahead(state: dict) -> pd.DataFrame:
    """The rows a forecast can score past the data it learnt from: each series' next ``horizon`` times after its last
    known value (the recorded history's), with the series' keys and what they or the calendar decide."""
    time, keys, history = state["time"], state["keys"], state["history"]
    if history.empty:
        return pd.DataFrame(columns=[*keys, time])
    groups = history.groupby(keys, sort=False, dropna=False) if keys else [((), history)]
    frames = [pd.DataFrame({time: following(series[time], state["horizon"])}).assign(
        **dict(zip(keys, key if isinstance(key, tuple) else (key,)))) for key, series in groups]
    rows = pd.concat(frames, ignore_index=True)[[*keys, time]]
    cycle = state["calendar"]  # a numeric time's season, or a date's calendar parts
    by = deciders(rows, time, keys, cycle if isinstance(cycle, int) else None)

    def value(name: str, values: Any) -> pd.Series:
        if name != "_year":
            return by[name].map(values)
        years = by[name] + values
        return years.astype(int) if isinstance(values, int) else years

    return rows.assign(**{column: value(*decider).to_numpy() for column, decider in state["decided"].items()})


def build(inp, out, params):
    target, time = inp.require_target(), inp.time_column
    if not inp.is_split():
        raise ServiceError("a forecast's features are built after the split by time: the bundle is not split yet")
    train, test = inp.table("train"), inp.table("test")
    if not time or time not in train.columns:
        raise ServiceError("a forecast needs the bundle's time column to order the target's past")
    if not pd.api.types.is_numeric_dtype(train[target]) or pd.api.types.is_bool_dtype(train[target]):
        raise ServiceError(f"the target '{target}' holds {train[target].dtype} values, not amounts: a forecast from "
                           "its past needs numbers")
    horizon_unit = str(params.get("horizon_unit", "step"))
    lags = int(params.get("lags", 3))
    if lags < 1:
        raise ServiceError(f"lags must be at least 1, got {lags}")
    times = time_values(train[time])
    step = time_step_seconds(times)
    count = float(params.get("horizon", 1))
    horizon = horizon_steps(count, horizon_unit, step)
    season = season_steps(times, step)
    keys = series_keys(train, time, inp.feature_columns(train))
    rows = train.groupby(keys).size().max() if keys else len(train)
    if horizon >= rows / 2:
        raise ServiceError(f"the training series has {rows} rows: too short to learn a forecast {horizon} steps "
                           "ahead from its own past (at least twice the horizon is needed)")
    steps_back = {f"{target}_lag_{k}": k for k in range(horizon, horizon + lags)}
    if season and (seasonal := season * math.ceil(horizon / season)) not in steps_back.values():
        steps_back[f"{target}_lag_{seasonal}"] = seasonal
    window = season or lags
    numeric_time = pd.api.types.is_numeric_dtype(train[time])
    cycles = [part for part, seconds in CYCLES if step and step < seconds] if not numeric_time else []
    state = {"target": target, "time": time, "keys": keys, "horizon": horizon, "lags": steps_back,
             "longest_step": longest_step(times, [train[k] for k in keys]), "window": window,
             "mean": f"{target}_mean_{window}_lag_{horizon}", "naive": f"{target}_lag_{horizon}",
             "calendar": season if numeric_time else cycles,  # a numeric time's season is its cycle
             "history": pd.DataFrame(columns=[*keys, time, "_t", "_y"])}
    state["decided"] = decided_columns(train, time, keys, inp.feature_columns(train), season if numeric_time else None)

    def apply(frame, fitted):
        return calendar(lagged(frame, fitted), fitted)

    first = lagged(train, state, strict=False)
    known = np.isfinite(first[[*steps_back, state["mean"]]].to_numpy(dtype=float)).all(axis=1)
    out.write_table("train", calendar(first[known], state))
    try:
        out.write_table("test", apply(test, {**state, "history": tail([train], state)}))
    except ValueError as exc:  # a series of the test rows the training rows never had
        raise ServiceError(str(exc)) from None
    transforms.record(out, apply, {**state, "history": tail([train, test], state)}, ahead=ahead)
    said = None if horizon_unit in ("step", "steps") else f"{count:g} {horizon_unit}{'' if count == 1 else 's'}"
    out.meta["naive_forecast"] = state["naive"]
    out.meta["past_features"] = [*steps_back, state["mean"]]
    out.meta["trend_features"] = [time if numeric_time else f"{time}_trend"]
    out.meta["horizon"] = f"{horizon} step{'' if horizon == 1 else 's'}" + (f" ({said})" if said else "")
    out.write_metrics({"horizon_steps": horizon, "rows_without_past": int(len(known) - known.sum())})
    out.append_report(
        "## Forecast features\n\n"
        f"Forecasting {horizon} steps ahead" + (f" ({said})" if said else "") + f": `{target}` "
        f"{', '.join(str(k) for k in steps_back.values())} steps back and its mean over the {window} steps ending "
        f"{horizon} back" + (f", within each series of {', '.join(keys)}" if keys else "") + ". "
        f"{int(len(known) - known.sum())} first training rows have no past that far back and were left out.")


if __name__ == "__main__":
    run_service(build)
