"""Standardise the numeric feature columns to zero mean and unit variance, learned from the training table.

Missing values are ignored when learning the mean and spread and stay missing in the output.
"""

from sklearn.preprocessing import StandardScaler

from dagsmith_kit import run_service
from dagsmith_kit.features import fit_replace


def scale(inp, out, params):
    scaler = StandardScaler(
        with_mean=bool(params.get("with_mean", True)),
        with_std=bool(params.get("with_std", True)),
    )
    fit_replace(inp, out, scaler, numeric=True)


if __name__ == "__main__":
    run_service(scale)
