"""Chance-corrected agreement between a classifier's predicted labels and the test labels: Cohen's kappa
(optionally weighted, "linear" or "quadratic", for ordered classes) and the Matthews correlation
coefficient, for binary and multiclass targets. Only the ``prediction`` column is used.

Weighted kappa needs the order of the classes: label_order, or numeric labels (sorted by value);
unordered text labels are refused.
"""

from sklearn.metrics import accuracy_score, cohen_kappa_score, matthews_corrcoef

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import classification_results


def _as_number(label):
    try:
        return float(label)
    except ValueError:
        return None


def evaluate_agreement(inp, out, params):
    weights = params.get("weights", None)
    label_order = params.get("label_order", None)
    if weights not in (None, "linear", "quadratic"):
        raise ServiceError(f"weights must be null, 'linear' or 'quadratic', got {weights!r}")
    y_true, predictions = classification_results(inp)
    y_pred = predictions["prediction"].astype(str).to_numpy()
    present = set(y_true) | set(y_pred)
    labels = None
    if weights and label_order is not None:
        labels = [str(label) for label in label_order]
        missing = sorted(present - set(labels))
        if missing:
            raise ServiceError(f"label_order does not list these classes: {', '.join(missing[:5])}")
    elif weights:
        if any(_as_number(label) is None for label in present):
            raise ServiceError("weighted kappa needs ordered classes, but the labels are text; "
                               "give label_order (the classes from lowest to highest)")
        labels = sorted(present, key=_as_number)
    metrics = {"cohen_kappa": cohen_kappa_score(y_true, y_pred, labels=labels, weights=weights),
               "matthews_corrcoef": matthews_corrcoef(y_true, y_pred),
               "accuracy": accuracy_score(y_true, y_pred)}
    name = f"{weights}-weighted kappa" if weights else "Cohen's kappa"
    out.write_metrics({k: float(v) for k, v in metrics.items()})
    out.append_report(f"## Agreement beyond chance\n\n- {name}: {metrics['cohen_kappa']:.4f}\n"
                      f"- Matthews correlation: {metrics['matthews_corrcoef']:.4f}\n"
                      f"- accuracy: {metrics['accuracy']:.4f}"
                      + (f"\n- class order: {', '.join(labels)}" if labels else ""))


if __name__ == "__main__":
    run_service(evaluate_agreement)
