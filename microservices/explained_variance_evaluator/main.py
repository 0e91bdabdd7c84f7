"""How much of the test target's variation a regression model explains: explained variance, R2, adjusted
R2 (penalised by the number of feature columns of the test table), D2 absolute error (the median-based
analogue of R2) and the mean error (bias: explained variance minus R2 grows with it).

Needs a numeric target and refuses missing values in the test target or the predictions. Adjusted R2 is
left out when there are not more test rows than features plus one.
"""

from sklearn.metrics import d2_absolute_error_score, explained_variance_score, r2_score

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import finite_metrics, regression_results


def evaluate_explained_variance(inp, out, params):
    y_true, y_pred = regression_results(inp)
    if y_true.isna().any() or y_pred.isna().any():
        raise ServiceError("the test target or the predictions have missing values; impute or drop them first")
    if len(y_true) < 2:
        raise ServiceError("explained variance needs at least 2 test rows")
    n, p = len(y_true), len(inp.feature_columns(inp.table("test")))
    r2 = r2_score(y_true, y_pred)
    metrics = finite_metrics({
        "explained_variance": explained_variance_score(y_true, y_pred),
        "r2": r2,
        "adjusted_r2": 1 - (1 - r2) * (n - 1) / (n - p - 1) if n - p - 1 > 0 else float("nan"),
        "d2_absolute_error": d2_absolute_error_score(y_true, y_pred),
        "mean_error": (y_pred - y_true).mean(),
    })
    out.write_metrics(metrics)
    out.append_report(f"## Explained variance ({n} test rows, {p} features)\n\n"
                      + "\n".join(f"- {k}: {v:.4f}" for k, v in metrics.items()))


if __name__ == "__main__":
    run_service(evaluate_explained_variance)
