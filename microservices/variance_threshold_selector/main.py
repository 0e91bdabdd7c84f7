"""Drop numeric feature columns whose variance in the training table is at most threshold (constant columns by default).

Other columns pass through; missing values are ignored when computing variances.
"""

from sklearn.feature_selection import VarianceThreshold

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.features import feature_subset, fit_replace


def select(inp, out, params):
    threshold = float(params.get("threshold", 0.0))
    columns = feature_subset(inp, inp.fit_table(), numeric=True)
    selector = VarianceThreshold(threshold=threshold)
    try:
        kept = fit_replace(inp, out, selector, numeric=True, columns=columns)
    except ValueError as exc:
        raise ServiceError(f"no numeric feature has a variance above {threshold}: {exc}") from None
    dropped = [c for c in columns if c not in kept]
    out.write_metrics({"features_dropped": len(dropped)})
    out.append_report(f"## Variance threshold ({threshold})\n\nDropped: {', '.join(dropped) or 'none'}")


if __name__ == "__main__":
    run_service(select)
