"""Which columns a forecast knows before their time comes, read from the values.

A forecast for next month cannot use what is measured next month (the same day's open price does not exist when the
close is forecast). What it does know ahead is the calendar and which series a row belongs to: a column whose value
a cycle of the calendar decides (a month name, a weekday number, the day of the year), the year itself, or a column
that tells the series apart (the store of a table of stores by week) and what the series decides (the store's
region). Each column is tested against those keys on the rows themselves; a key that seldom repeats decides nothing,
since any column would follow it. A yearly figure (a population by year) is not known ahead: the year is no cycle.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dagsmith.agents.profiler.semantic import as_dates
from dagsmith.models.profile import ColumnProfile
from dagsmith.models.profile import SemanticType as S
from dagsmith_kit.cleaning import cycle_position, decided_by, repeats, steps_per_unit

#: A series key: with the time it tells the rows apart on at least this share of them.
SERIES_KEY_SHARE = 0.95
#: Parts of a date a calendar decides, by their readable names.
CALENDAR_PARTS = {"year": "year", "quarter": "quarter", "month": "month", "day": "day", "day of week": "day_of_week",
                  "day of year": "day_of_year", "hour": "hour"}


def known_ahead(frame: pd.DataFrame, columns: list[ColumnProfile], time: str | None) -> dict[str, str]:
    """Each column a forecast knows ahead, with what decides it (a calendar part of ``time``, or 'series' for a
    column telling the series apart or decided by one); columns measured with the time are absent."""
    if time is None or time not in frame.columns:
        return {}
    calendar = _calendar(frame[time])
    year = calendar.pop("year", None)
    keys = [(name, part) for name, part in calendar.items() if repeats(part)]
    if frame[time].duplicated().any():
        keys += [("series", frame[c.name]) for c in columns if c.name != time and _tells_series(frame, time, c)]
    found = {}
    for column in columns:
        values = frame[column.name]
        if column.name == time or column.unique <= 1:
            continue
        if year is not None and _is_year(year, values):
            found[column.name] = "year"
        elif decided := next((name for name, key in keys if decided_by(key, values) is not None), None):
            found[column.name] = decided
    return found


def _tells_series(frame: pd.DataFrame, time: str, column: ColumnProfile) -> bool:
    """Whether ``column`` tells apart the series of a table of several rows per time: with the time, it names
    (nearly) every row."""
    if column.semantic_type not in {S.CATEGORICAL, S.BOOLEAN, S.ID}:
        return False
    return len(frame[[time, column.name]].drop_duplicates()) >= SERIES_KEY_SHARE * len(frame)


def _is_year(year: pd.Series, values: pd.Series) -> bool:
    """Whether the column is the time's year (give or take a constant: a year counted from 2000): the year is no
    cycle, so a value the year decides is known ahead only when it is the year itself, not a yearly measurement."""
    if not pd.api.types.is_numeric_dtype(values):
        return False
    offsets = (values.astype(float) - year).dropna()
    return len(offsets) > 1 and offsets.nunique() == 1


def _calendar(times: pd.Series) -> dict[str, pd.Series]:
    """The time's calendar parts: of dates, those of ``CALENDAR_PARTS`` (the hour only where times have one); of
    decimal years (R's monthly 1991.083), the year and the position within it."""
    if pd.api.types.is_numeric_dtype(times):
        values = times.astype(float)
        steps = steps_per_unit(values)
        return {"year": np.floor(values), **({"season": cycle_position(values, steps)} if steps else {})}
    distinct = times.dropna().drop_duplicates()  # parsed once each: a table of many series repeats every time
    stamps = times.map(pd.Series(as_dates(distinct).to_numpy(), index=distinct.to_numpy()))
    if stamps.isna().all():
        return {}
    has_time = bool((stamps.dropna() != stamps.dropna().dt.normalize()).any())
    return {name: getattr(stamps.dt, part) for name, part in CALENDAR_PARTS.items() if part != "hour" or has_time}
