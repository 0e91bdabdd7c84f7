"""Per-class precision, recall, F1 and support of a classifier's predicted labels on the test set, with their
macro and weighted averages and the accuracy, for any number of classes. Only the ``prediction`` column is
used: models without probabilities are fine.

The per-class keys are written for the max_classes classes with the most test rows (the averages always
cover every class); classes that were never predicted get precision 0.
"""

import numpy as np
from sklearn.metrics import accuracy_score, precision_recall_fscore_support

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import classification_results, markdown_table


def evaluate_per_class(inp, out, params):
    max_classes = int(params.get("max_classes", 50))
    if max_classes < 1:
        raise ServiceError(f"max_classes must be at least 1, got {max_classes}")
    y_true, predictions = classification_results(inp)
    y_pred = predictions["prediction"].astype(str).to_numpy()
    labels = sorted(set(y_true) | set(y_pred))
    precision, recall, f1, support = precision_recall_fscore_support(y_true, y_pred, labels=labels,
                                                                     zero_division=0)
    metrics = {"accuracy": accuracy_score(y_true, y_pred), "n_classes": len(labels)}
    for average in ("macro", "weighted"):
        p, r, f, _ = precision_recall_fscore_support(y_true, y_pred, labels=labels, average=average, zero_division=0)
        metrics.update({f"{average}_precision": p, f"{average}_recall": r, f"{average}_f1": f})
    shown = sorted(range(len(labels)), key=lambda i: (-support[i], labels[i]))[:max_classes]
    rows = []
    for i in shown:
        metrics.update({f"class.{labels[i]}.precision": precision[i], f"class.{labels[i]}.recall": recall[i],
                        f"class.{labels[i]}.f1": f1[i], f"class.{labels[i]}.support": support[i]})
        rows.append([labels[i], precision[i], recall[i], f1[i], int(support[i])])
    out.write_metrics({k: float(v) for k, v in metrics.items()})
    worst = labels[int(np.argmin(f1))]
    out.append_report("## Per-class report\n\n"
                      + markdown_table(["class", "precision", "recall", "F1", "support"], rows)
                      + f"\n\nAccuracy {metrics['accuracy']:.4f}, macro F1 {metrics['macro_f1']:.4f}, "
                      f"weighted F1 {metrics['weighted_f1']:.4f}; weakest class: {worst}.")


if __name__ == "__main__":
    run_service(evaluate_per_class)
