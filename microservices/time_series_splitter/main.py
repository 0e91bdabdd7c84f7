"""Split the table by time: the latest `test_size` fraction of rows (by the bundle's time column or the
`time_column` parameter) becomes the test set, everything earlier the training set. Needs a parseable time column.
Rows without a target value are left out (counted in the metrics).
"""

import math

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.cleaning import rows_to_split, time_values


def split(inp, out, params):
    test_size = float(params.get("test_size", 0.2))
    column = params.get("time_column", None) or inp.time_column
    data = rows_to_split(inp, out, test_size, ("time", column))
    times = time_values(data[column])
    if times.isna().any():
        raise ServiceError(f"{int(times.isna().sum())} values of the time column '{column}' are missing or not dates")
    ordered = times.sort_values(kind="stable")
    cutoff = ordered.iloc[len(data) - math.ceil(len(data) * test_size)]
    chronological, earlier = data.loc[ordered.index], (ordered < cutoff).to_numpy()
    train, test = chronological[earlier], chronological[~earlier]
    if train.empty:
        raise ServiceError(f"cannot split: every row shares the latest time of '{column}'")
    out.write_table("train", train)
    out.write_table("test", test)
    out.remove_table("data")
    out.meta["time_column"] = column
    out.write_metrics({"train_rows": len(train), "test_rows": len(test)})
    out.append_report(f"## Time split\n\nTrain: {len(train)} rows before {cutoff}; test: {len(test)} rows from it on.")


if __name__ == "__main__":
    run_service(split)
