"""Drop categorical (non-numeric) feature columns with too many distinct values to encode: more than
`max_categories` (default 50) distinct training values, or free text whose distinct values make up more than
`max_unique_fraction` (default 0.5) of the training rows (checked from 20 rows on). Numeric columns, the
target and id columns stay; refuses when every feature column would go.
"""

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.cleaning import drop_columns


def drop_high_cardinality(inp, out, params):
    max_categories = int(params.get("max_categories", 50))
    max_unique_fraction = float(params.get("max_unique_fraction", 0.5))
    if max_categories < 2:
        raise ServiceError(f"max_categories must be at least 2, got {max_categories}")

    def high_cardinality(train):
        reasons = {}
        for column in inp.feature_columns(train, numeric=False):
            distinct = train[column].nunique()
            if distinct > max_categories or (len(train) >= 20 and distinct > max_unique_fraction * len(train)):
                reasons[column] = f"{distinct} distinct values in {len(train)} rows"
        return reasons

    drop_columns(inp, out, high_cardinality, "a high-cardinality categorical column",
                 f"High-cardinality columns (more than {max_categories} categories)")


if __name__ == "__main__":
    run_service(drop_high_cardinality)
