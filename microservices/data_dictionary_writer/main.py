"""Write a data dictionary of the whole dataset to report.md: for every column its role (target, id, time or
feature), dtype, number of non-missing values, number of distinct values and a few example values. Counts of
columns by kind go to metrics; the data is not changed.
"""

import pandas as pd

from dagsmith_kit import run_service
from dagsmith_kit.insight import analysis_table, is_numeric, markdown_table
from dagsmith_kit.params import at_least


def write_data_dictionary(inp, out, params):
    n_examples = at_least("n_examples", int(params.get("n_examples", 3)), 1)
    max_columns = at_least("max_columns", int(params.get("max_columns", 200)), 1)
    frame = analysis_table(inp)
    roles = {inp.time_column: "time", **dict.fromkeys(inp.id_columns, "id"), inp.target: "target"}
    rows = []
    for column in frame.columns[:max_columns]:
        series = frame[column]
        examples = [str(v)[:30] for v in series.dropna().drop_duplicates().head(n_examples)]
        rows.append([column, roles.get(column, "feature"), str(series.dtype), int(series.notna().sum()),
                     int(series.nunique()), ", ".join(examples)])
    numeric = sum(is_numeric(frame[c]) for c in frame.columns)
    datetimes = sum(pd.api.types.is_datetime64_any_dtype(frame[c]) for c in frame.columns)
    out.write_metrics({"dictionary.rows": len(frame), "dictionary.columns": frame.shape[1],
                       "dictionary.numeric_columns": numeric, "dictionary.datetime_columns": datetimes,
                       "dictionary.other_columns": frame.shape[1] - numeric - datetimes})
    more = f"\n\n{frame.shape[1] - len(rows)} more columns not listed." if frame.shape[1] > len(rows) else ""
    out.append_report(f"## Data dictionary\n\n{len(frame)} rows, {frame.shape[1]} columns.\n\n"
                      + markdown_table(["column", "role", "dtype", "non-missing", "distinct", "examples"], rows) + more)


if __name__ == "__main__":
    run_service(write_data_dictionary)
