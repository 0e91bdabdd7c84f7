"""Add polynomial and interaction terms (up to degree) of the numeric feature columns, keeping the originals.

Needs numeric features without missing values; refuses when the result would exceed max_columns columns.
"""

from math import comb

from sklearn.preprocessing import PolynomialFeatures

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.features import feature_subset, fit_replace, require_complete


def expand(inp, out, params):
    degree = int(params.get("degree", 2))
    interaction_only = bool(params.get("interaction_only", False))
    max_columns = int(params.get("max_columns", 500))
    if degree < 1:
        raise ServiceError(f"degree must be at least 1, got {degree}")
    columns = feature_subset(inp, inp.fit_table(), numeric=True)
    n = len(columns)
    produced = (sum(comb(n, d) for d in range(1, degree + 1)) if interaction_only else comb(n + degree, degree) - 1)
    if produced > max_columns:
        raise ServiceError(f"degree {degree} on {n} numeric features would make {produced} columns, more than "
                           f"max_columns={max_columns}; lower the degree or select features first")
    require_complete(inp, columns, "polynomial_features needs complete numeric features")
    expander = PolynomialFeatures(degree=degree, interaction_only=interaction_only, include_bias=False)
    fit_replace(inp, out, expander, numeric=True, columns=columns)


if __name__ == "__main__":
    run_service(expand)
