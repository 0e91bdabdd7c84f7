"""Impute then standardise numeric features; written against an old scikit-learn that had ``Imputer``."""

from sklearn.preprocessing import Imputer, StandardScaler

from dagsmith_kit import run_service
from dagsmith_kit.features import fit_replace


def scale(inp, out, params):
    fit_replace(inp, out, Imputer(strategy="mean"), numeric=True)
    fit_replace(out, out, StandardScaler(), numeric=True)


if __name__ == "__main__":
    run_service(scale)
