"""K-fold cross-validation of the trained model's estimator on the training table: the estimator in
model.joblib is cloned (same hyper-parameters, unfitted) and refitted on n_splits folds of ``train``
(shuffled with random_state; stratified for classification; each group's rows in one fold when the split kept
groups apart, so a patient's visits are not validated on a model that saw them), with scikit-learn's
cross_validate. Fewer folds are made when the smallest class or the groups are fewer than n_splits. Reports
the mean, standard deviation, minimum and maximum of the validation score, each fold's score, the mean
training score and the gap between the two (a large gap points at overfitting). The score is "accuracy"
for classification and "r2" for regression unless scoring names another scikit-learn scorer.

Needs model.joblib, a split bundle whose training table holds the model's feature columns and a complete
training target.
"""

from sklearn.base import clone
from sklearn.model_selection import cross_validate

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.folds import cross_folds, groups_of


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
    folds, how = cross_folds(train[target].reset_index(drop=True), n_splits, random_state,
                             classification=not inp.predicts_numbers, groups=groups_of(inp, train))
    result = cross_validate(clone(model), train[features], train[target], cv=folds, scoring=scoring,
                            return_train_score=True)
    scores, train_scores = result["test_score"], result["train_score"]
    metrics = {f"cv.{scoring}.mean": scores.mean(), f"cv.{scoring}.std": scores.std(ddof=1),
               f"cv.{scoring}.min": scores.min(), f"cv.{scoring}.max": scores.max(),
               f"cv.{scoring}.train_mean": train_scores.mean(),
               f"cv.{scoring}.overfit_gap": train_scores.mean() - scores.mean(),
               **{f"cv.{scoring}.fold_{i + 1}": score for i, score in enumerate(scores)}}
    out.write_metrics({k: float(v) for k, v in metrics.items()})
    out.append_report(f"## Cross-validation of {type(model).__name__}\n\n{how[0].upper()}{how[1:]}. "
                      f"{scoring}: {scores.mean():.4f} ± {scores.std(ddof=1):.4f} (folds: "
                      + ", ".join(f"{s:.4f}" for s in scores) + f"); training {train_scores.mean():.4f}, "
                      f"gap {train_scores.mean() - scores.mean():.4f}.")


if __name__ == "__main__":
    run_service(evaluate_by_cross_validation)
