"""Expand datetime columns (and text columns that parse as dates) into year, month, day, dayofweek and hour
columns, dropping the original; hour is skipped for date-only columns. The bundle's time column is kept.

A numeric time column in fractions of a unit (decimal years: 1991.0, 1991.083, ...) gets its position in the
cycle (the month of monthly data) as a number and as a sine and cosine, so that a linear model can follow a
seasonal pattern too; the time itself stays as the trend. A time counted in whole units (a year per row) has no
cycle to expand: it is the trend, and the tables pass through as they are.
"""

import pandas as pd

from dagsmith_kit import ServiceError, run_service, transform_tables
from dagsmith_kit.cleaning import season_features, steps_per_unit, time_values

PARTS = {"year": "year", "month": "month", "day": "day", "dayofweek": "day_of_week", "hour": "hour"}


def extract(inp, out, params):
    min_parsed = float(params.get("min_parsed_fraction", 0.9))

    def fit(train):
        found = {}
        time = inp.time_column  # not a feature while it holds raw stamps, but expanded all the same
        numeric_time = time in train.columns and pd.api.types.is_numeric_dtype(train[time])
        if numeric_time:
            steps = steps_per_unit(train[time])
            if steps:
                found[time] = steps
            time = []
        else:
            time = [time] if time in train.columns else []
        whole_time = numeric_time and not found  # a count of whole units (years): the trend itself, no cycle in it
        for column in [*inp.feature_columns(train, numeric=False), *time]:
            present = train[column].dropna()
            parsed = time_values(present)
            if len(present) and parsed.notna().mean() >= min_parsed:
                has_time = (parsed.dropna() != parsed.dropna().dt.normalize()).any()
                found[column] = [p for p in PARTS if p != "hour" or has_time]
        if not found and not whole_time:
            raise ServiceError("no datetime or date-like feature columns found to expand")
        return found

    def apply(frame, found):
        frame = frame.copy()
        for column, parts in found.items():
            if isinstance(parts, int):  # a numeric time: its position in the cycle of `parts` steps
                frame = frame.assign(**season_features(column, frame[column], parts))
                continue
            stamps = time_values(frame[column])
            for part in parts:
                frame[f"{column}_{part}"] = getattr(stamps.dt, PARTS[part]).astype(float)
            if column != inp.time_column:
                frame = frame.drop(columns=column)
        return frame

    found = transform_tables(inp, out, fit, apply)
    expanded = "; ".join(f"`{column}` into its position in a cycle of {parts} steps" if isinstance(parts, int)
                         else f"`{column}` into {', '.join(parts)}" for column, parts in found.items())
    out.append_report("## Date features\n\n" + (f"Expanded {expanded}." if found else
                      f"The time '{inp.time_column}' counts whole units: it is the trend itself, with no cycle to "
                      "expand, so the tables pass through as they are."))


if __name__ == "__main__":
    run_service(extract)
