"""Winsorise continuous numeric features: clip each to its `lower_quantile` and `upper_quantile` training
percentiles (default 1st and 99th), so every row is kept but extreme values lose their pull.

Binary flags are left alone; missing values are ignored when learning the percentiles and stay missing.
"""

from dagsmith_kit import ServiceError, run_service, transform_tables
from dagsmith_kit.cleaning import continuous_features


def winsorise(inp, out, params):
    lower_quantile = float(params.get("lower_quantile", 0.01))
    upper_quantile = float(params.get("upper_quantile", 0.99))
    if not 0.0 <= lower_quantile < upper_quantile <= 1.0:
        raise ServiceError(f"need 0 <= lower_quantile < upper_quantile <= 1, got {lower_quantile} and {upper_quantile}")

    def fit(train):
        columns = continuous_features(inp, train)
        return train[columns].astype(float).quantile([lower_quantile, upper_quantile])

    clipped = {}

    def apply(frame, bounds):
        frame = frame.copy()
        values = frame[list(bounds.columns)].astype(float)
        low, high = bounds.iloc[0], bounds.iloc[1]
        outside = (values.lt(low) | values.gt(high)).sum()
        for column, count in outside.items():
            clipped[column] = clipped.get(column, 0) + int(count)
        frame[list(bounds.columns)] = values.clip(lower=low, upper=high, axis=1)
        return frame

    transform_tables(inp, out, fit, apply)
    out.write_metrics({"values_clipped": sum(clipped.values())})
    lines = "\n".join(f"- `{c}`: {n} values clipped" for c, n in clipped.items() if n) or "No value was clipped."
    out.append_report(f"## Winsorising ({lower_quantile:.0%} - {upper_quantile:.0%})\n\n" + lines)


if __name__ == "__main__":
    run_service(winsorise)
