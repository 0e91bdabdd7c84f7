"""Give text columns their real type, decided on the training table: numeric-looking text becomes numbers,
yes/no and true/false text becomes booleans, date-looking text becomes datetimes. Ids are kept; so is the target,
except a regression target of numbers stored as text, whose stray words ('n/a') become missing values.
"""

import pandas as pd

from dagsmith_kit import run_service, transform_tables

BOOLEANS = {"yes": True, "y": True, "true": True, "t": True, "no": False, "n": False, "false": False, "f": False}


def as_number(values):
    text = values.astype("string").str.strip().str.replace(r"^[$€£]|%$", "", regex=True)
    thousands = text.str.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", na=False)
    text = text.where(~thousands, text.str.replace(",", ""))
    return pd.to_numeric(text.replace("", pd.NA), errors="coerce").astype("float64")  # NaN, not pd.NA, for sklearn


def as_boolean(values):
    return values.astype("string").str.strip().str.lower().map(BOOLEANS).astype("boolean")


def as_datetime(values):
    text = values.astype("string").str.strip()
    text = text.where(text.str.contains(r"\d", na=False))  # words like "today" are not dates here
    return pd.to_datetime(text, errors="coerce", format="mixed")


NUMERIC_TASKS = ("regression", "time_series_forecasting")
CONVERTERS = {"number": as_number, "boolean": as_boolean, "datetime": as_datetime}


def fix_types(inp, out, params):
    numeric_threshold = float(params.get("numeric_threshold", 0.95))
    date_threshold = float(params.get("date_threshold", 0.9))
    booleans = bool(params.get("booleans", True))

    def fit(train):
        plan = {}
        for column in inp.feature_columns(train, numeric=False):
            values = train[column].dropna()
            values = values[values.astype(str).str.strip() != ""]
            if values.empty or pd.api.types.is_datetime64_any_dtype(values):
                continue
            if as_number(values).notna().mean() >= numeric_threshold:
                plan[column] = "number"
            elif booleans and as_boolean(values).notna().all():
                plan[column] = "boolean"
            elif as_datetime(values).notna().mean() >= date_threshold:
                plan[column] = "datetime"
        target = inp.target
        if inp.task_type in NUMERIC_TASKS and target in train.columns and not pd.api.types.is_numeric_dtype(
                train[target]) and as_number(train[target].dropna()).notna().mean() >= numeric_threshold:
            plan[target] = "number"
        return plan

    def apply(frame, plan):
        frame = frame.copy()
        for column, kind in plan.items():
            frame[column] = CONVERTERS[kind](frame[column])
        return frame

    plan = transform_tables(inp, out, fit, apply)
    out.write_metrics({f"columns_to_{kind}": sum(k == kind for k in plan.values()) for kind in CONVERTERS})
    changes = "\n".join(f"- `{column}` -> {kind}" for column, kind in plan.items()) or "No column changed type."
    out.append_report("## Type fixes\n\n" + changes)


if __name__ == "__main__":
    run_service(fix_types)
