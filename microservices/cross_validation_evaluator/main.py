"""K-fold cross-validation of the trained model's estimator on the training table: the estimator in
model.joblib is cloned (same hyper-parameters, unfitted) and refitted on n_splits folds of ``train``
(stratified for classification, shuffled with random_state), with scikit-learn's cross_validate. Reports
the mean, standard deviation, minimum and maximum of the validation score, each fold's score, the mean
training score and the gap between the two (a large gap points at overfitting). The score is "accuracy"
for classification and "r2" for regression unless scoring names another scikit-learn scorer.

Needs model.joblib, a split bundle whose training table holds the model's feature columns, a complete
training target, and at least n_splits rows of every class for classification.
"""

from sklearn.base import clone
from sklearn.model_selection import KFold, StratifiedKFold, cross_validate

from dagsmith_kit import ServiceError, run_service


def evaluate_by_cross_validation(inp, out, params):
    n_splits = int(params.get("n_splits", 5))
    random_state = int(params.get("random_state", 42))
    scoring = params.get("scoring", None) or ("r2" if inp.predicts_numbers else "accuracy")
    target = inp.require_target()
    if not inp.is_split():
        raise ServiceError("cross-validation refits on the training table; run a train/test splitter first")
    if n_splits < 2:
        raise ServiceError(f"n_splits must be at least 2, got {n_splits}")
    model = inp.load_model()
    train = inp.table("train")
    features = [str(c) for c in getattr(model, "feature_names_in_", inp.feature_columns(train))]
    absent = [c for c in features if c not in train.columns]
    if absent:
        raise ServiceError(f"the training table lacks columns the model was trained on: {', '.join(absent[:10])}")
    if train[target].isna().any():
        raise ServiceError(f"the training target '{target}' has missing values; drop those rows first")
    if inp.predicts_numbers:
        folds = KFold(n_splits=n_splits, shuffle=True, random_state=random_state)
    else:
        smallest = train[target].value_counts()
        if smallest.min() < n_splits:
            raise ServiceError(f"n_splits={n_splits} is more than the {smallest.min()} training rows of class "
                               f"{smallest.idxmin()!r}; lower n_splits")
        folds = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=random_state)
    result = cross_validate(clone(model), train[features], train[target], cv=folds, scoring=scoring,
                            return_train_score=True)
    scores, train_scores = result["test_score"], result["train_score"]
    metrics = {f"cv.{scoring}.mean": scores.mean(), f"cv.{scoring}.std": scores.std(ddof=1),
               f"cv.{scoring}.min": scores.min(), f"cv.{scoring}.max": scores.max(),
               f"cv.{scoring}.train_mean": train_scores.mean(),
               f"cv.{scoring}.overfit_gap": train_scores.mean() - scores.mean(),
               **{f"cv.{scoring}.fold_{i + 1}": score for i, score in enumerate(scores)}}
    out.write_metrics({k: float(v) for k, v in metrics.items()})
    out.append_report(f"## {n_splits}-fold cross-validation of {type(model).__name__}\n\n"
                      f"{scoring}: {scores.mean():.4f} ± {scores.std(ddof=1):.4f} (folds: "
                      + ", ".join(f"{s:.4f}" for s in scores) + f"); training {train_scores.mean():.4f}, "
                      f"gap {train_scores.mean() - scores.mean():.4f}.")


if __name__ == "__main__":
    run_service(evaluate_by_cross_validation)
