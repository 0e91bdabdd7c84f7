"""Clip numeric features to [Q1 - k*IQR, Q3 + k*IQR], with the quartiles learned on the training table.

Binary flags and columns with no spread (IQR 0) are left alone; missing values stay missing.
"""

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.cleaning import clip_tables, clipped_lines, continuous_features


def clip(inp, out, params):
    k = float(params.get("k", 1.5))
    if k < 0:
        raise ServiceError(f"k must be non-negative, got {k}")

    def fit(train):
        bounds = {}
        for column in continuous_features(inp, train):
            q1, q3 = train[column].quantile([0.25, 0.75])
            if q3 > q1:
                bounds[column] = (q1 - k * (q3 - q1), q3 + k * (q3 - q1))
        return bounds

    clipped = clip_tables(inp, out, fit)
    out.write_metrics({"values_clipped": sum(clipped.values())})
    out.append_report(f"## Outlier clipping (IQR, k={k})\n\n" + clipped_lines(clipped))


if __name__ == "__main__":
    run_service(clip)
