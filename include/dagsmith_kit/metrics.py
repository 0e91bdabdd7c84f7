"""The metrics a goal may name, each defined once: how people read it, which tasks it fits, the scikit-learn scorer
a model search validates with, and what kind of metric it is. The goal reader, the model search (in the pipeline and
inside each model service's sandbox) and the answer read them from here; task types are ``TaskType`` values.
"""

from __future__ import annotations

from dataclasses import dataclass

CLASSIFICATION = ("binary_classification", "multiclass_classification")
REGRESSION = ("regression", "time_series_forecasting")


@dataclass(frozen=True)
class Metric:
    name: str
    #: As people read it in an answer ("ROC AUC").
    label: str
    tasks: tuple[str, ...]
    #: scikit-learn's scorer for it (greater is better, so errors are negated), or None when no search uses it.
    scorer: str | None = None
    greater_is_better: bool = True
    #: A goal (or ``--metric``) may name it; the others are chosen by the pipeline or only reported.
    nameable: bool = True
    #: About one class of a binary task: the minority class, the one people ask about (churners, fraud).
    one_class: bool = False
    #: Weighs a rare class as much as a common one (so training weighs classes too).
    class_balanced: bool = False
    #: The key of the trivial predictor's score on the same held-out rows, when the run's quality reports one.
    baseline: str | None = None


METRICS: dict[str, Metric] = {metric.name: metric for metric in (
    Metric("accuracy", "accuracy", CLASSIFICATION, "accuracy", baseline="trivial_accuracy"),
    Metric("balanced_accuracy", "balanced accuracy", CLASSIFICATION, "balanced_accuracy", class_balanced=True,
           baseline="trivial_balanced_accuracy"),
    Metric("f1", "macro F1", CLASSIFICATION, "f1", one_class=True, class_balanced=True, baseline="trivial_f1"),
    Metric("roc_auc", "ROC AUC", CLASSIFICATION, "roc_auc", baseline="trivial_roc_auc"),
    Metric("recall", "recall", CLASSIFICATION, "recall", one_class=True, class_balanced=True),
    Metric("precision", "precision", CLASSIFICATION, "precision", one_class=True, class_balanced=True),
    Metric("f1_macro", "f1 macro", CLASSIFICATION, "f1_macro", nameable=False, class_balanced=True),
    Metric("log_loss", "log loss", CLASSIFICATION, "neg_log_loss", greater_is_better=False),
    Metric("rmse", "RMSE", REGRESSION, "neg_root_mean_squared_error", greater_is_better=False,
           baseline="baseline_rmse"),
    Metric("mae", "mae", REGRESSION, "neg_mean_absolute_error", greater_is_better=False, baseline="baseline_mae"),
    Metric("r2", "R²", REGRESSION, "r2", baseline="baseline_r2"),
    Metric("nrmse", "normalised RMSE", REGRESSION, greater_is_better=False, nameable=False),
    Metric("mape", "mape", REGRESSION, "neg_mean_absolute_percentage_error", greater_is_better=False),
    Metric("silhouette", "silhouette", ("clustering",)),
)}
#: Other names a goal uses for a metric.
ALIASES = {"auc": "roc_auc"}


def label(name: str) -> str:
    """A metric's name as people read it (an unknown one with its underscores as spaces)."""
    return METRICS[name].label if name in METRICS else name.replace("_", " ")
