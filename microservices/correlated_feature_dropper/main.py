"""Drop redundant numeric features: of every pair whose absolute correlation on the training table exceeds
`threshold` (default 0.95), the later column is dropped and the earlier one kept.

`method` is "pearson" (default) or "spearman" (rank correlation, for monotonic non-linear redundancy).
Missing values are allowed (pairwise complete rows are used); binary flags count as numeric features.
Non-numeric columns, the target and id columns are never touched.
"""

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.cleaning import drop_columns


def drop_redundant(inp, out, params):
    threshold = float(params.get("threshold", 0.95))
    method = params.get("method", "pearson")
    if not 0.0 < threshold < 1.0:
        raise ServiceError(f"threshold must be between 0 and 1, got {threshold}")
    if method not in ("pearson", "spearman"):
        raise ServiceError(f"method must be 'pearson' or 'spearman', got {method!r}")

    def redundant(train):
        columns = inp.feature_columns(train, numeric=True)
        correlation = train[columns].astype(float).corr(method=method).abs()
        reasons = {}
        for i, column in enumerate(columns):
            partners = [c for c in columns[:i] if c not in reasons and correlation.loc[c, column] > threshold]
            if partners:
                reasons[column] = f"|r| = {correlation.loc[partners[0], column]:.3f} with `{partners[0]}`"
        return reasons

    drop_columns(inp, out, redundant, "redundant", f"Correlated features (|{method} r| > {threshold})")


if __name__ == "__main__":
    run_service(drop_redundant)
