"""Drop columns that carry no information, learned on the training table: constant columns and id-like
columns (text or integer with a different value in every row). The target, named id columns and the time
column stay: a year per row is unique too, and it orders the rows.
"""

import pandas as pd

from dagsmith_kit import run_service, transform_tables


def drop_columns(inp, out, params):
    drop_id_like = bool(params.get("drop_id_like", True))
    min_rows_for_ids = int(params.get("min_rows_for_ids", 20))

    def fit(train):
        dropped = {}
        for column in (c for c in inp.feature_columns(train) if c != inp.time_column):
            values = train[column]
            if values.nunique(dropna=False) <= 1:
                dropped[column] = "constant"
            elif (drop_id_like and len(train) >= min_rows_for_ids and values.notna().all()
                  and values.nunique() == len(train)
                  and (pd.api.types.is_integer_dtype(values) or not pd.api.types.is_numeric_dtype(values))
                  and not pd.api.types.is_datetime64_any_dtype(values)):
                dropped[column] = "id-like"
        return dropped

    dropped = transform_tables(inp, out, fit, lambda frame, d: frame.drop(columns=list(d), errors="ignore"))
    out.write_metrics({"columns_dropped": len(dropped)})
    lines = "\n".join(f"- `{column}` ({why})" for column, why in dropped.items()) or "No column dropped."
    out.append_report("## Uninformative columns\n\n" + lines)


if __name__ == "__main__":
    run_service(drop_columns)
