"""Weight-of-evidence encoding for binary classification: each category of a categorical (non-numeric)
feature becomes ln(share of positives in it / share of negatives in it), learned on the training table.

`smoothing` (default 0.5) is added to every count so rare and one-sided categories stay finite; missing
values are a category of their own; categories unseen in training get 0 (no evidence either way). The
positive class is `positive_label` (default: the second label in sorted order). Writes each column's
information value (`iv_<column>`). Refuses multiclass and regression targets (use target_encoder).
"""

import numpy as np

from dagsmith_kit import ServiceError, run_service, transform_tables
from dagsmith_kit.features import feature_subset


def strength(iv):
    return "useless" if iv < 0.02 else "weak" if iv < 0.1 else "medium" if iv < 0.3 else "strong"


def encode(inp, out, params):
    smoothing = float(params.get("smoothing", 0.5))
    positive_label = params.get("positive_label", None)
    target = inp.require_target()
    if inp.task_type != "binary_classification":
        raise ServiceError(f"woe_encoder needs a binary classification target, not a '{inp.task_type}' task; "
                           "use target_encoder for multiclass or regression")
    if smoothing <= 0:
        raise ServiceError(f"smoothing must be positive, got {smoothing}")

    def fit(train):
        labelled = train.dropna(subset=[target])
        classes = sorted(labelled[target].unique(), key=str)
        if len(classes) != 2:
            raise ServiceError(f"woe_encoder needs exactly two target classes, the training table has {len(classes)}")
        positive = classes[1] if positive_label is None else positive_label
        if positive not in classes:
            raise ServiceError(f"positive_label {positive_label!r} is not a target class "
                               f"({classes[0]!r}, {classes[1]!r})")
        is_positive = (labelled[target] == positive).astype(float)
        weights, values = {}, {}
        for column in feature_subset(inp, train, numeric=False):
            counts = is_positive.groupby(labelled[column], dropna=False).agg(["sum", "count"])
            positives = counts["sum"] + smoothing
            negatives = counts["count"] - counts["sum"] + smoothing
            share_pos, share_neg = positives / positives.sum(), negatives / negatives.sum()
            weights[column] = np.log(share_pos / share_neg)
            values[column] = float(((share_pos - share_neg) * weights[column]).sum())
        return weights, values

    def apply(frame, state):
        frame = frame.copy()
        for column, woe in state[0].items():
            frame[column] = woe.reindex(frame[column], fill_value=0.0).to_numpy(dtype=float)
        return frame

    _, information = transform_tables(inp, out, fit, apply)
    out.write_metrics({f"iv_{column}": iv for column, iv in information.items()})
    ranked = sorted(information.items(), key=lambda item: -item[1])
    out.append_report("## Weight-of-evidence encoding\n\n" + "\n".join(
        f"- `{column}`: information value {iv:.3f} ({strength(iv)})" for column, iv in ranked))


if __name__ == "__main__":
    run_service(encode)
