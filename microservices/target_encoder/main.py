"""Target-encode the categorical (non-numeric) features: each category becomes a smoothed mean of the target.

Needs a target. Learns from the training table only, which is itself encoded out-of-fold (cross-fitting,
as sklearn's TargetEncoder does); multiclass targets give one column per feature and class.
"""

from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.preprocessing import TargetEncoder

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.features import fit_replace


def encode(inp, out, params):
    inp.require_target()
    task = inp.task_type or ""
    n_splits = int(params.get("cv", 5))
    random_state = int(params.get("random_state", 42))
    if n_splits < 2:
        raise ServiceError(f"cv must be at least 2 folds, got {n_splits}")
    if "classification" in task:
        folds = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=random_state)
    elif inp.predicts_numbers:
        folds = KFold(n_splits=n_splits, shuffle=True, random_state=random_state)
    else:
        raise ServiceError(f"target encoding needs a classification or regression task, not '{task}'")
    smooth = params.get("smooth", "auto")
    encoder = TargetEncoder(
        target_type="continuous" if inp.predicts_numbers else "auto",
        smooth=smooth if smooth == "auto" else float(smooth),
        cv=folds,
    )
    fit_replace(inp, out, encoder, numeric=False, use_target=True)


if __name__ == "__main__":
    run_service(encode)
