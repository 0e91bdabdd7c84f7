"""Plot the precision-recall curve of a binary classifier from the positive class's ``proba_`` column, with
its average precision, the no-skill baseline (the positive rate) and the threshold giving the best F1.
Fails for multiclass targets and for models that gave no probabilities.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from sklearn.metrics import average_precision_score, precision_recall_curve

from dagsmith_kit import run_service
from dagsmith_kit.insight import binary_results, save_figure


def plot_precision_recall(inp, out, params):
    is_positive, scores, positive = binary_results(inp, params.get("pos_label", None), "the precision-recall curve")
    precision, recall, thresholds = precision_recall_curve(is_positive, scores)
    average_precision = average_precision_score(is_positive, scores)
    prevalence = float(is_positive.mean())
    f1 = np.divide(2 * precision * recall, precision + recall, out=np.zeros_like(precision),
                   where=precision + recall > 0)[:-1]
    best = int(np.argmax(f1))
    fig, ax = plt.subplots(figsize=(5.5, 5))
    ax.step(recall, precision, where="post", color="darkviolet", label=f"AP = {average_precision:.3f}")
    ax.axhline(prevalence, ls="--", color="grey", label=f"no skill ({prevalence:.2f})")
    ax.scatter([recall[best]], [precision[best]], color="black", zorder=3,
               label=f"best F1 {f1[best]:.3f} at {thresholds[best]:.2f}")
    ax.set(xlabel="recall", ylabel="precision", xlim=(0, 1.01), ylim=(0, 1.02),
           title=f"Precision-recall curve, positive = {positive}")
    ax.legend(loc="lower left")
    save_figure(out, fig, "precision_recall_curve.png")
    out.write_metrics({"pr_curve.average_precision": float(average_precision), "pr_curve.prevalence": prevalence,
                       "pr_curve.best_f1": float(f1[best]), "pr_curve.best_threshold": float(thresholds[best])})
    out.append_report(f"## Precision-recall curve\n\nAverage precision {average_precision:.4f} (positive class: "
                      f"{positive}, base rate {prevalence:.3f}); best F1 {f1[best]:.4f} at probability threshold "
                      f"{thresholds[best]:.3f}.\n\n![precision-recall curve](artifacts/precision_recall_curve.png)")


if __name__ == "__main__":
    run_service(plot_precision_recall)
