"""Add a 0/1 column `<column>_missing` for every feature column that has missing values in the training table,
so a model can still use the fact that a value was missing after it has been imputed. Run it before an imputer.

Columns complete in training get no indicator (gaps appearing only in the test table are ignored). The
original columns are left as they are.
"""

import numpy as np
import pandas as pd
from sklearn.impute import MissingIndicator

from dagsmith_kit import ServiceError, run_service, transform_tables


def add_indicators(inp, out, params):
    suffix = str(params.get("suffix", "_missing"))
    if not suffix:
        raise ServiceError("suffix must not be empty")

    def fit(train):
        columns = inp.feature_columns(train)
        indicator = MissingIndicator(features="missing-only", error_on_new=False)
        indicator.fit(train[columns].astype(object).where(train[columns].notna(), np.nan))
        flagged = [columns[i] for i in indicator.features_]
        clash = [f"{c}{suffix}" for c in flagged if f"{c}{suffix}" in train.columns]
        if clash:
            raise ServiceError(f"indicator columns would overwrite existing columns: {', '.join(clash[:5])}")
        return columns, indicator, flagged

    def apply(frame, state):
        columns, indicator, flagged = state
        values = indicator.transform(frame[columns].astype(object).where(frame[columns].notna(), np.nan))
        flags = pd.DataFrame(values.astype(int), columns=[f"{c}{suffix}" for c in flagged], index=frame.index)
        return pd.concat([frame, flags], axis=1)

    _, _, flagged = transform_tables(inp, out, fit, apply)
    out.write_metrics({"indicators_added": len(flagged)})
    out.append_report("## Missing-value indicators\n\n" + (", ".join(f"`{c}{suffix}`" for c in flagged)
                                                         or "No feature has missing values in training."))


if __name__ == "__main__":
    run_service(add_indicators)
