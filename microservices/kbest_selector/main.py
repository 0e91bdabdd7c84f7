"""Keep the k numeric features most related to the target (ANOVA F or mutual information for classification,
F-test for regression), learned from the training table. Needs all features numeric and without missing values.
"""

from functools import partial

from sklearn.feature_selection import SelectKBest, f_classif, f_regression, mutual_info_classif

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.features import fit_replace, require_complete


def select(inp, out, params):
    train = inp.fit_table()
    inp.require_target()
    if inp.feature_columns(train, numeric=False):
        raise ServiceError("kbest_selector needs numeric features only; encode the categorical columns first")
    columns = inp.feature_columns(train, numeric=True)
    require_complete(inp, columns, "kbest_selector needs complete numeric features")
    score = params.get("score_func", "f_classif")
    task = inp.task_type or ""
    if inp.predicts_numbers:
        score_func = f_regression
    elif "classification" in task:
        options = {"f_classif": f_classif,
                   "mutual_info": partial(mutual_info_classif, random_state=int(params.get("random_state", 42)))}
        if score not in options:
            raise ServiceError(f"score_func must be one of {', '.join(options)}, got '{score}'")
        score_func = options[score]
    else:
        raise ServiceError(f"kbest_selector needs a classification or regression task, not '{task}'")
    k = int(params.get("k", 10))
    if k < 1:
        raise ServiceError(f"k must be at least 1, got {k}")
    selector = SelectKBest(score_func=score_func, k=min(k, len(columns)))
    kept = fit_replace(inp, out, selector, numeric=True, columns=columns, use_target=True)
    out.append_report(f"## Best {len(kept)} features\n\n" + ", ".join(kept))


if __name__ == "__main__":
    run_service(select)
