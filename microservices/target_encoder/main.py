"""Target-encode the categorical (non-numeric) features: each category becomes a smoothed mean of the target.

Needs a target. Learns from the training table only, which is itself encoded out-of-fold (cross-fitting,
as sklearn's TargetEncoder does, on folds of whole groups when the split kept groups apart); multiclass targets
give one column per feature and class.
"""

from sklearn.preprocessing import TargetEncoder

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.features import fit_replace
from dagsmith_kit.folds import cross_folds, groups_of


def encode(inp, out, params):
    target = inp.require_target()
    task = inp.task_type or ""
    n_splits = int(params.get("cv", 5))
    random_state = int(params.get("random_state", 42))
    if n_splits < 2:
        raise ServiceError(f"cv must be at least 2 folds, got {n_splits}")
    if "classification" not in task and not inp.predicts_numbers:
        raise ServiceError(f"target encoding needs a classification or regression task, not '{task}'")
    train = inp.fit_table()
    folds, _ = cross_folds(train[target].reset_index(drop=True), n_splits, random_state,
                           classification=not inp.predicts_numbers, groups=groups_of(inp, train))
    smooth = params.get("smooth", "auto")
    encoder = TargetEncoder(
        target_type="continuous" if inp.predicts_numbers else "auto",
        smooth=smooth if smooth == "auto" else float(smooth),
        cv=iter(folds),  # consumed by the fit: the recorded encoder does not carry every row's fold
    )
    fit_replace(inp, out, encoder, numeric=False, use_target=True)


if __name__ == "__main__":
    run_service(encode)
