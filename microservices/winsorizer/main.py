"""Winsorise continuous numeric features: clip each to its `lower_quantile` and `upper_quantile` training
percentiles (default 1st and 99th), so every row is kept but extreme values lose their pull.

Binary flags are left alone; missing values are ignored when learning the percentiles and stay missing.
"""

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.cleaning import clip_tables, clipped_lines, continuous_features


def winsorise(inp, out, params):
    lower_quantile = float(params.get("lower_quantile", 0.01))
    upper_quantile = float(params.get("upper_quantile", 0.99))
    if not 0.0 <= lower_quantile < upper_quantile <= 1.0:
        raise ServiceError(f"need 0 <= lower_quantile < upper_quantile <= 1, got {lower_quantile} and {upper_quantile}")

    def fit(train):
        columns = continuous_features(inp, train)
        quantiles = train[columns].astype(float).quantile([lower_quantile, upper_quantile])
        return {column: (quantiles[column].iloc[0], quantiles[column].iloc[1]) for column in columns}

    clipped = clip_tables(inp, out, fit)
    out.write_metrics({"values_clipped": sum(clipped.values())})
    out.append_report(f"## Winsorising ({lower_quantile:.0%} - {upper_quantile:.0%})\n\n" + clipped_lines(clipped))


if __name__ == "__main__":
    run_service(winsorise)
