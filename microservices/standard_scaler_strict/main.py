"""Standardise the numeric feature columns to zero mean and unit variance, learned from the training table.

Refuses input with missing values in the numeric features (impute first).
"""

from sklearn.preprocessing import StandardScaler

from dagsmith_kit import run_service
from dagsmith_kit.features import feature_subset, fit_replace, require_complete


def scale(inp, out, params):
    columns = feature_subset(inp, inp.fit_table(), numeric=True)
    require_complete(inp, columns, "standard_scaler_strict does not accept missing values")
    scaler = StandardScaler(with_mean=bool(params.get("with_mean", True)), with_std=bool(params.get("with_std", True)))
    fit_replace(inp, out, scaler, numeric=True, columns=columns)


if __name__ == "__main__":
    run_service(scale)
