"""Keep the numeric features that an L1-penalised (sparse) linear model gives a non-zero coefficient,
learned on the standardised training table: L1 logistic regression for classification (strength `C`, smaller
keeps fewer), the lasso for regression (`alpha`, chosen by 5-fold cross-validation when not given).

`max_features` optionally caps how many are kept (the largest coefficients win). Needs a target, numeric
features only and no missing values; refuses when the penalty removes every feature.
"""

from sklearn.feature_selection import SelectFromModel

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.features import (RANKER_IMPORTANCE, fit_replace, linear_ranker, numeric_only_features,
                                   require_complete, supervised_task)


def select(inp, out, params):
    C = float(params.get("C", 1.0))
    alpha = params.get("alpha", None)
    max_features = params.get("max_features", None)
    if C <= 0 or (alpha is not None and float(alpha) <= 0):
        raise ServiceError("C and alpha must be positive")
    target = inp.require_target()
    task = supervised_task(inp, "l1_selector")
    columns = numeric_only_features(inp, "l1_selector")
    require_complete(inp, columns, "l1_selector needs complete numeric features")
    train = inp.fit_table()
    model = linear_ranker(task, l1=True, C=C, alpha=None if alpha is None else float(alpha))
    model.fit(train[columns], train[target])
    selector = SelectFromModel(model, prefit=True, threshold=1e-5, importance_getter=RANKER_IMPORTANCE,
                               max_features=None if max_features is None else min(int(max_features), len(columns)))
    if not selector.fit(train[columns]).get_support().any():
        raise ServiceError("the L1 penalty removed every feature; raise C (classification) or lower alpha (regression)")
    kept = fit_replace(inp, out, selector, numeric=True, columns=columns)
    out.write_metrics({"features_kept": len(kept), "features_dropped": len(columns) - len(kept)})
    out.append_report(f"## L1 feature selection ({task})\n\nKept {len(kept)} of {len(columns)}: {', '.join(kept)}")


if __name__ == "__main__":
    run_service(select)
