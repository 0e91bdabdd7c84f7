"""Diagnose a regression model's test residuals (actual minus predicted): their mean (bias), spread, skewness
and excess kurtosis, the share beyond two standard deviations, the Durbin-Watson statistic (residual
autocorrelation in row order), and heteroscedasticity: the Breusch-Pagan test of the squared residuals
against the predictions (n * R^2 of that auxiliary regression, chi-squared with 1 degree of freedom) and the
Spearman correlation between |residual| and prediction.

Needs a numeric target and refuses missing values in the test target or the predictions.
"""

import numpy as np
from scipy import stats
from sklearn.metrics import r2_score

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import finite_metrics, regression_results


def evaluate_residuals(inp, out, params):
    alpha = float(params.get("alpha", 0.05))
    if not 0.0 < alpha < 1.0:
        raise ServiceError(f"alpha must be between 0 and 1, got {alpha}")
    y_true, y_pred = regression_results(inp)
    if y_true.isna().any() or y_pred.isna().any():
        raise ServiceError("the test target or the predictions have missing values; impute or drop them first")
    if len(y_true) < 8:
        raise ServiceError(f"residual diagnostics need at least 8 test rows, got {len(y_true)}")
    actual, predicted = y_true.to_numpy(), y_pred.to_numpy()
    residuals = actual - predicted
    std = residuals.std(ddof=1)
    squared = residuals**2
    slope, intercept = np.polyfit(predicted, squared, 1) if np.ptp(predicted) > 0 else (0.0, squared.mean())
    bp_statistic = len(residuals) * max(r2_score(squared, intercept + slope * predicted), 0.0)
    metrics = finite_metrics({
        "residual_mean": residuals.mean(),
        "residual_std": std,
        "residual_skew": stats.skew(residuals),
        "residual_excess_kurtosis": stats.kurtosis(residuals),
        "residual_share_beyond_2std": np.mean(np.abs(residuals - residuals.mean()) > 2 * std),
        "durbin_watson": np.sum(np.diff(residuals) ** 2) / np.sum(squared),
        "breusch_pagan_statistic": bp_statistic,
        "breusch_pagan_pvalue": stats.chi2.sf(bp_statistic, 1),
        "abs_residual_spearman": stats.spearmanr(np.abs(residuals), predicted).statistic,
    })
    metrics["heteroscedastic"] = float(metrics.get("breusch_pagan_pvalue", 1.0) < alpha)
    out.write_metrics(metrics)
    verdict = ("the residual spread changes with the prediction (heteroscedastic)" if metrics["heteroscedastic"]
               else "no evidence that the residual spread changes with the prediction")
    out.append_report("## Residual diagnostics\n\n" + "\n".join(f"- {k}: {v:.4g}" for k, v in metrics.items())
                      + f"\n\nBreusch-Pagan at alpha={alpha:g}: {verdict}.")


if __name__ == "__main__":
    run_service(evaluate_residuals)
