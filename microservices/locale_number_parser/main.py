"""Parse numbers written in a European (or any other) locale: "1.234,56", "12,5 %", "€ 3.400" become floats.

`decimal` and `thousands` give the separators (default "," and "."; thousands may be "" or a space). A text
feature is converted when at least `min_parsed_fraction` of its non-empty training values parse; values that
do not parse in a converted column become missing. Other columns, the target and id columns are left alone.
"""

import pandas as pd

from dagsmith_kit import ServiceError, run_service, transform_tables

SYMBOLS = r"[%€$£¥]|\b(?:EUR|USD|GBP|CHF)\b"


def parse(values, decimal, thousands):
    text = values.astype("string").str.replace(SYMBOLS, "", regex=True)
    text = text.str.replace(r"[\s\u00a0\u202f]", "", regex=True)
    if thousands:
        text = text.str.replace(thousands, "", regex=False)
    text = text.str.replace(decimal, ".", regex=False)
    return pd.to_numeric(text.replace("", pd.NA), errors="coerce")


def filled(values):
    """Whether each value holds something (not missing, not blank)."""
    return ~values.astype("string").str.fullmatch(r"\s*", na=True)


def convert(inp, out, params):
    decimal = str(params.get("decimal", ","))
    thousands = str(params.get("thousands", "."))
    min_parsed_fraction = float(params.get("min_parsed_fraction", 0.95))
    if len(decimal) != 1 or decimal.isalnum():
        raise ServiceError(f"decimal must be a single separator character such as ',' or '.', got {decimal!r}")
    if thousands.strip() == decimal:
        raise ServiceError(f"the decimal and thousands separators must differ, both are {decimal!r}")
    if not 0.0 < min_parsed_fraction <= 1.0:
        raise ServiceError(f"min_parsed_fraction must be in (0, 1], got {min_parsed_fraction}")
    thousands = thousands.strip()

    def fit(train):
        chosen = []
        for column in inp.feature_columns(train, numeric=False):
            values = train.loc[filled(train[column]), column]
            if len(values) and parse(values, decimal, thousands).count() >= min_parsed_fraction * len(values):
                chosen.append(column)
        return chosen

    unparsed = {}

    def apply(frame, chosen):
        frame = frame.copy()
        for column in chosen:
            numbers = parse(frame[column], decimal, thousands)
            unparsed[column] = unparsed.get(column, 0) + int(filled(frame[column]).sum() - numbers.count())
            frame[column] = numbers.astype("float64")
        return frame

    chosen = transform_tables(inp, out, fit, apply)
    out.write_metrics({"columns_parsed": len(chosen), "values_unparsed": sum(unparsed.values())})
    lines = "\n".join(f"- `{c}` -> number ({unparsed.get(c, 0)} values did not parse)" for c in chosen)
    out.append_report(f"## Locale numbers (decimal {decimal!r}, thousands {thousands!r})\n\n"
                      + (lines or "No column holds numbers in this format."))


if __name__ == "__main__":
    run_service(convert)
