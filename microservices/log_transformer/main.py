"""Replace right-skewed continuous features by log(1 + x), which tames long tails (incomes, prices, counts).

A feature is transformed when its training skewness is above `min_skew` (default 0.75). Transformed features
must be non-negative: negative values in any table are refused (use power_transformer, which accepts any
sign). Missing values stay missing; binary flags and other columns are left alone.
"""

import numpy as np

from dagsmith_kit import ServiceError, run_service, transform_tables
from dagsmith_kit.cleaning import continuous_features


def transform(inp, out, params):
    min_skew = float(params.get("min_skew", 0.75))

    def fit(train):
        skewness = train[continuous_features(inp, train)].astype(float).skew()
        return {column: float(value) for column, value in skewness.items() if value > min_skew}

    def apply(frame, skewed):
        frame = frame.copy()
        negative = [column for column in skewed if (frame[column] < 0).any()]
        if negative:
            raise ServiceError(f"log_transformer refuses negative values; {', '.join(negative[:5])} "
                               "have values below 0 (use power_transformer, Yeo-Johnson, instead)")
        for column in skewed:
            frame[column] = np.log1p(frame[column].astype(float))
        return frame

    skewed = transform_tables(inp, out, fit, apply)
    out.write_metrics({"columns_log_transformed": len(skewed)})
    out.append_report(f"## Log transform (skew > {min_skew})\n\n" + ("\n".join(
        f"- `{column}` (skew {value:.2f})" for column, value in skewed.items()) or "No feature is skewed enough."))


if __name__ == "__main__":
    run_service(transform)
