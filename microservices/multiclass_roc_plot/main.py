"""Plot one-vs-rest ROC curves, one per class, from a classifier's ``proba_<label>`` columns, for binary and
multiclass targets alike (a binary target gets the single curve of its positive, second class). Writes each
class's AUC and their macro average. Classes absent from the test labels get no curve. Fails when the model
gave no probabilities.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from sklearn.metrics import auc, roc_curve

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import class_probabilities, classification_results, markdown_table, save_figure


def plot_roc_one_vs_rest(inp, out, params):
    max_classes = int(params.get("max_classes", 12))
    y_true, predictions = classification_results(inp)
    labels, proba = class_probabilities(predictions)
    unknown = sorted(set(y_true) - set(labels))
    if unknown:
        raise ServiceError(f"test labels {unknown[:5]} have no proba_ column: the probabilities do not cover "
                           "every class")
    if len(labels) > max_classes:
        raise ServiceError(f"{len(labels)} classes are more than max_classes={max_classes} curves in one plot")
    shown = labels[1:] if len(labels) == 2 else labels
    present = [label for label in shown if 0 < (y_true == label).sum() < len(y_true)]
    if not present:
        raise ServiceError("the test labels hold a single class: a ROC curve needs positives and negatives")
    fig, ax = plt.subplots(figsize=(6, 5.5))
    areas = {}
    for label in present:
        fpr, tpr, _ = roc_curve(y_true == label, proba[:, labels.index(label)])
        areas[label] = float(auc(fpr, tpr))
        ax.plot(fpr, tpr, lw=1.6, label=f"{label} vs rest (AUC = {areas[label]:.3f})")
    macro = float(np.mean(list(areas.values())))
    ax.plot([0, 1], [0, 1], "--", color="grey", label="chance")
    ax.set(xlabel="false positive rate", ylabel="true positive rate",
           title=f"One-vs-rest ROC curves (macro AUC = {macro:.3f})")
    ax.legend(loc="lower right", fontsize=8)
    save_figure(out, fig, "roc_one_vs_rest.png")
    out.write_metrics({"roc_ovr.macro_auc": macro, **{f"roc_ovr.auc.{label}": a for label, a in areas.items()}})
    skipped = sorted(set(shown) - set(present))
    note = f"\n\nNo curve for classes absent from the test labels: {', '.join(skipped)}." if skipped else ""
    out.append_report("## One-vs-rest ROC curves\n\n"
                      + markdown_table(["class", "AUC"], [[k, v] for k, v in areas.items()])
                      + f"\n\nMacro average AUC {macro:.4f}.{note}\n\n![ROC curves](artifacts/roc_one_vs_rest.png)")


if __name__ == "__main__":
    run_service(plot_roc_one_vs_rest)
