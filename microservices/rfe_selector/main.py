"""Keep the `n_features` numeric features that a standardised linear model relies on most, by recursive
feature elimination learned on the training table: fit, drop the `step` weakest features (smallest
coefficients), repeat. Logistic regression for classification, ridge regression for regression.

Needs a target, numeric features only (encode first) and no missing values (impute first).
"""

from sklearn.feature_selection import RFE

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.features import (RANKER_IMPORTANCE, fit_replace, linear_ranker, numeric_only_features,
                                   require_complete, supervised_task)


def select(inp, out, params):
    n_features = int(params.get("n_features", 10))
    step = int(params.get("step", 1))
    if n_features < 1 or step < 1:
        raise ServiceError(f"n_features and step must be at least 1, got {n_features} and {step}")
    inp.require_target()
    task = supervised_task(inp, "rfe_selector")
    columns = numeric_only_features(inp, "rfe_selector")
    require_complete(inp, columns, "rfe_selector needs complete numeric features")
    selector = RFE(linear_ranker(task), n_features_to_select=min(n_features, len(columns)), step=step,
                   importance_getter=RANKER_IMPORTANCE)
    kept = fit_replace(inp, out, selector, numeric=True, columns=columns, use_target=True)
    ranking = sorted(zip(selector.ranking_, columns))
    out.write_metrics({"features_kept": len(kept), "features_dropped": len(columns) - len(kept)})
    out.append_report(f"## Recursive feature elimination ({task})\n\nKept: {', '.join(kept)}\n\nDropped, last "
                      "eliminated first: " + (", ".join(c for rank, c in ranking if rank > 1) or "none"))


if __name__ == "__main__":
    run_service(select)
