"""Plot the ROC curve (with its AUC) of a binary classifier from its ``proba_<label>`` prediction columns.
Fails for multiclass targets and for models that gave no probabilities.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from sklearn.metrics import auc, roc_curve  # noqa: E402

from dagsmith_kit import ServiceError, run_service  # noqa: E402
from dagsmith_kit.insight import classification_results, save_figure  # noqa: E402


def plot_roc(inp, out, params):
    pos_label = params.get("pos_label", None)
    y_true, predictions = classification_results(inp)
    proba_columns = [c for c in predictions.columns if c.startswith("proba_")]
    if not proba_columns:
        raise ServiceError("the predictions have no proba_ columns: the model gave no probabilities")
    labels = [c.removeprefix("proba_") for c in proba_columns]
    if len(labels) != 2 or len(set(y_true)) > 2:
        classes = max(len(labels), len(set(y_true)))
        raise ServiceError(f"the ROC curve needs a binary target, but there are {classes} classes")
    positive = str(pos_label) if pos_label is not None else labels[1]
    if positive not in labels:
        raise ServiceError(f"pos_label {positive!r} is not one of the classes {labels}")
    fpr, tpr, _ = roc_curve(y_true == positive, predictions[f"proba_{positive}"].to_numpy(dtype=float))
    area = auc(fpr, tpr)
    fig, ax = plt.subplots(figsize=(5.5, 5))
    ax.plot(fpr, tpr, color="crimson", label=f"ROC (AUC = {area:.3f})")
    ax.plot([0, 1], [0, 1], "--", color="grey", label="chance")
    ax.set(xlabel="false positive rate", ylabel="true positive rate", title=f"ROC curve, positive = {positive}")
    ax.legend(loc="lower right")
    save_figure(out, fig, "roc_curve.png")
    out.write_metrics({"roc_curve.auc": float(area)})
    out.append_report(f"## ROC curve\n\nAUC = {area:.4f} (positive class: {positive})."
                      "\n\n![ROC curve](artifacts/roc_curve.png)")


if __name__ == "__main__":
    run_service(plot_roc)
