"""Plot the ROC curve of a binary classifier from the positive class's ``proba_`` column, with its AUC and the
chance diagonal. Fails for multiclass targets and for models that gave no probabilities.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from sklearn.metrics import auc, roc_curve

from dagsmith_kit import run_service
from dagsmith_kit.insight import binary_results, save_figure


def plot_roc(inp, out, params):
    is_positive, scores, positive = binary_results(inp, params.get("pos_label", None), "the ROC curve")
    fpr, tpr, _ = roc_curve(is_positive, scores)
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
