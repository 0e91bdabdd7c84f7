"""Export the predictions next to the rows they were made for (``test`` after a split, else ``data``) as
``artifacts/predictions.csv``: the table's columns (all of them, or only the id and target columns when
``include_features`` is false) followed by the prediction columns. ``max_rows`` keeps only the first rows.
Refuses a table that already has a column named like a prediction column.
"""

import pandas as pd

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import save_text_artifact


def export_predictions(inp, out, params):
    include_features = bool(params.get("include_features", True))
    max_rows = params.get("max_rows", None)
    predictions = inp.predictions()
    frame = inp.table("test" if inp.is_split() else "data")
    if len(predictions) != len(frame):
        raise ServiceError(f"{len(predictions)} predictions for {len(frame)} rows of the table")
    if not include_features:
        frame = frame[[c for c in frame.columns if c in inp.id_columns or c == inp.target]]
    clash = sorted(set(frame.columns) & set(predictions.columns))
    if clash:
        raise ServiceError(f"the table already has column(s) named like the predictions ({', '.join(clash)}); "
                           "rename them first")
    joined = pd.concat([frame.reset_index(drop=True), predictions.reset_index(drop=True)], axis=1)
    if max_rows is not None:
        joined = joined.head(int(max_rows))
    save_text_artifact(out, "predictions.csv", joined.to_csv(index=False))
    out.write_metrics({"export.rows": len(joined), "export.columns": joined.shape[1]})
    out.append_report(f"## Exported predictions\n\n{len(joined)} rows x {joined.shape[1]} columns in "
                      "[predictions.csv](artifacts/predictions.csv).")


if __name__ == "__main__":
    run_service(export_predictions)
