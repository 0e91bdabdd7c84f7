"""Plot the confusion matrix of a classifier's predictions against the test labels (counts, or normalised
over true labels, predictions or all). Needs a split bundle with predictions.parquet from a classifier.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from sklearn.metrics import ConfusionMatrixDisplay, confusion_matrix

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import classification_results, save_figure


def plot_confusion(inp, out, params):
    normalize = params.get("normalize", None)
    if normalize not in (None, "true", "pred", "all"):
        raise ServiceError(f"normalize must be null, 'true', 'pred' or 'all', got {normalize!r}")
    y_true, predictions = classification_results(inp)
    y_pred = predictions["prediction"].astype(str).to_numpy()
    labels = sorted(set(y_true) | set(y_pred))
    matrix = confusion_matrix(y_true, y_pred, labels=labels, normalize=normalize)
    size = 3 + 0.6 * len(labels)
    fig, ax = plt.subplots(figsize=(size + 1, size))
    ConfusionMatrixDisplay(matrix, display_labels=labels).plot(
        ax=ax, cmap="Blues", values_format=".2f" if normalize else "d", colorbar=False)
    ax.set_title("Confusion matrix" + (f" (normalised over {normalize})" if normalize else ""))
    plt.setp(ax.get_xticklabels(), rotation=45, ha="right")
    save_figure(out, fig, "confusion_matrix.png")
    out.write_metrics({"confusion.correct": int(np.trace(confusion_matrix(y_true, y_pred, labels=labels)))})
    out.append_report(f"## Confusion matrix\n\n{len(labels)} classes, {len(y_true)} test rows."
                      "\n\n![confusion matrix](artifacts/confusion_matrix.png)")


if __name__ == "__main__":
    run_service(plot_confusion)
