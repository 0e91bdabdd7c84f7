"""Is a result an answer? A supervised model's held-out quality beside what a trivial predictor scores on the same
rows; a clustering's separation.

A run whose model does no better than predicting the majority class or the training mean (for a forecast, nor than
its latest value, nor than each row's value a horizon earlier: the naive forecasts) completed nothing useful:
``finish`` fails it saying so, and every metric is shown beside its trivial counterpart (the CLI, the UI's run page,
the benchmark); one that scores too well to be true completes marked for review (``execution.doubt``), and so does
one whose lead over the trivial predictor chance explains (a one-sided test of the rows' paired errors, or of the
ROC AUC's distance from 0.5). The figures are recomputed here from the predictions and the held-out table, so they
do not depend on which evaluator the pipeline ran. Groups that barely separate complete marked for review too (a table
may hold no groups at all, which is an answer only when it is said), as do groups that are one yes/no column's values
and little else.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TypedDict

import numpy as np
import pandas as pd
from sklearn import metrics as skm

from dagsmith_kit import Bundle, BundleError, ServiceError
from dagsmith_kit.bundle import PROBA_PREFIX, probability_columns
from dagsmith_kit.cleaning import time_values
from dagsmith_kit.metrics import METRICS, label

#: Each held-out metric and the key of the trivial predictor's score on the same rows.
BASELINE_OF = {name: metric.baseline for name, metric in METRICS.items() if metric.baseline}
#: The metrics a supervised result is judged by, the first one it has: a classifier by how well its probabilities rank
#: the classes, else by its labels' macro F1 (with rare classes, labels at the even-odds threshold may all be the
#: majority's while the ranking is worth acting on); a regressor by its RMSE.
JUDGED_BY = ("roc_auc", "f1", "rmse")
#: The silhouette at or below which clusters show no substantial structure (Kaufman and Rousseeuw's reading).
SUBSTANTIAL_SILHOUETTE = 0.25
#: Groups that agree this well with one yes/no column's values (adjusted Rand index) are that column's values.
SAME_GROUPS = 0.9
#: How many standard errors ahead of the trivial predictor a model must be for chance to explain its lead less than one
#: time in twenty (one-sided): on a few dozen held-out rows a lead of a few thousandths is noise.
CLEAR_LEAD = 1.645


def judged_metric(metrics: dict[str, float]) -> tuple[str, bool] | None:
    """The metric ``metrics`` are judged by and whether higher is better (None when they hold none of them)."""
    return next(((name, METRICS[name].greater_is_better) for name in JUDGED_BY if name in metrics), None)


class BesideBaseline(TypedDict):
    """One held-out metric beside the trivial predictor's score on the same rows."""

    metric: str
    value: float
    baseline: float


@dataclass
class Quality:
    valid: bool
    metrics: dict[str, float] = field(default_factory=dict)
    problem: str | None = None
    #: Why a valid result is too good to trust before a person reviews it (``execution.doubt``).
    review: str | None = None
    #: The trivial predictor the baselines are the scores of, in words ("the majority class", "the value 12 steps
    #: earlier"); None where no baseline is scored.
    baseline: str | None = None

    def beside_baselines(self) -> list[BesideBaseline]:
        """Each held-out metric with the trivial predictor's score on the same rows, for people to read."""
        return [{"metric": name, "value": self.metrics[name], "baseline": self.metrics[baseline]}
                for name, baseline in BASELINE_OF.items() if name in self.metrics and baseline in self.metrics]


def classification_quality(y_true: pd.Series, y_pred: pd.Series, proba: pd.DataFrame | None,
                           y_train: pd.Series) -> Quality:
    """Accuracy, macro F1 and AUC (when probabilities exist), against a majority-class predictor; valid when the AUC,
    else the macro F1, beats the majority class's."""
    truth, predicted = y_true.astype(str).to_numpy(), y_pred.astype(str).to_numpy()
    majority = np.full_like(truth, y_train.astype(str).mode().iloc[0])
    result = {"accuracy": skm.accuracy_score(truth, predicted),
              "trivial_accuracy": skm.accuracy_score(truth, majority),
              "balanced_accuracy": skm.balanced_accuracy_score(truth, predicted),
              "trivial_balanced_accuracy": skm.balanced_accuracy_score(truth, majority),
              "f1": skm.f1_score(truth, predicted, average="macro"),
              "trivial_f1": skm.f1_score(truth, majority, average="macro")}
    labels = sorted(set(truth))
    if proba is not None and len(labels) > 1:
        proba = proba.rename(columns=lambda c: str(c).removeprefix(PROBA_PREFIX))
        if set(labels) <= set(proba.columns):
            values = proba[labels].to_numpy(dtype=float)
            values = values / np.clip(values.sum(axis=1, keepdims=True), 1e-12, None)
            if len(labels) == 2:
                result["roc_auc"] = skm.roc_auc_score(truth == labels[1], values[:, 1])
            else:
                result["roc_auc"] = skm.roc_auc_score(truth, values, multi_class="ovr", labels=labels)
            result["trivial_roc_auc"] = 0.5
    judged = next(name for name in JUDGED_BY if name in result)  # as the search chose
    name = label(judged)
    better = result[judged] > result[BASELINE_OF[judged]]
    lead = _auc_lead(result["roc_auc"], truth == labels[1]) if judged == "roc_auc" and len(labels) == 2 else None
    return Quality(better, result, None if better else
                   f"no better than predicting the majority class on the held-out rows ({name} {result[judged]:.4f}, "
                   f"the majority class scores {result[BASELINE_OF[judged]]:.4f})", baseline="the majority class",
                   review=_within_chance(better, lead, len(truth), f"{name} {result[judged]:.3f} against 0.5",
                                         "the majority class"))


def regression_quality(y_true: pd.Series, y_pred: pd.Series, y_train: pd.Series, *,
                       latest: float | None = None, naive: tuple[str, pd.Series] | None = None) -> Quality:
    """RMSE, MAE and R² (also RMSE and MAE divided by the held-out target's spread), against predicting the
    training mean, or for a forecast the best of the mean, ``latest`` (the last value it learnt from) and ``naive``
    (each row's own value as known a horizon earlier, with its name), which a forecast of a wandering series must
    beat to be worth anything."""
    truth, predicted = y_true.to_numpy(dtype=float), y_pred.to_numpy(dtype=float)
    if not np.isfinite(predicted).all():
        return Quality(False, {}, "non-finite predictions")
    spread = float(np.std(truth)) or 1.0
    trivial = {"the training mean": np.full_like(truth, float(y_train.mean()))}
    if latest is not None:
        trivial["the latest value"] = np.full_like(truth, latest)
    if naive is not None and np.isfinite(values := naive[1].to_numpy(dtype=float)).all():
        trivial[naive[0]] = values
    named, constant = min(trivial.items(), key=lambda item: skm.mean_squared_error(truth, item[1]))
    rmse = math.sqrt(skm.mean_squared_error(truth, predicted))
    baseline = math.sqrt(skm.mean_squared_error(truth, constant))
    mae = skm.mean_absolute_error(truth, predicted)
    result = {"rmse": rmse, "mae": mae, "nrmse": rmse / spread, "nmae": mae / spread,
              "r2": skm.r2_score(truth, predicted), "baseline_rmse": baseline,
              "baseline_mae": skm.mean_absolute_error(truth, constant), "baseline_r2": skm.r2_score(truth, constant)}
    better = rmse < baseline
    return Quality(better, result, None if better else
                   f"no better than predicting {named} on the held-out rows (RMSE {rmse:.4g}, {named} scores "
                   f"{baseline:.4g})", baseline=named,
                   review=_within_chance(better, _paired_lead((truth - constant) ** 2 - (truth - predicted) ** 2),
                                         len(truth), f"RMSE {rmse:.4g} against {baseline:.4g}", named))


def _paired_lead(gains: np.ndarray) -> float | None:
    """How many standard errors the mean of the rows' ``gains`` (the trivial predictor's squared error less the
    model's) lies above zero; None when every row gains the same."""
    spread = float(np.std(gains, ddof=1)) if len(gains) > 1 else 0.0
    return float(np.mean(gains)) / (spread / math.sqrt(len(gains))) if spread > 0 else None


def _auc_lead(auc: float, positive: np.ndarray) -> float | None:
    """How many standard errors a binary ROC AUC lies above 0.5 (Hanley and McNeil's error of the AUC)."""
    n1, n0 = int(positive.sum()), int((~positive).sum())
    q1, q2 = auc / (2 - auc), 2 * auc**2 / (1 + auc)
    variance = (auc * (1 - auc) + (n1 - 1) * (q1 - auc**2) + (n0 - 1) * (q2 - auc**2)) / max(n1 * n0, 1)
    return (auc - 0.5) / math.sqrt(variance) if variance > 0 else None


def _within_chance(better: bool, lead: float | None, rows: int, scores: str, trivial: str) -> str | None:
    """Why a model ahead of the trivial predictor may still have learnt nothing: a lead that chance explains."""
    if not better or lead is None or lead >= CLEAR_LEAD:
        return None
    return (f"the model is ahead of {trivial} by less than chance explains on {rows:,} held-out rows ({scores}): "
            f"it may have learnt nothing that holds on new rows.")


def supervised_quality(bundle: Bundle, *, classification: bool) -> Quality:
    """The held-out quality of the predictions in ``bundle`` (a model step's output: train, test, predictions)."""
    target = bundle.target
    try:
        test, train, predictions = bundle.table("test"), bundle.table("train"), bundle.predictions()
    except (BundleError, OSError, ValueError) as exc:
        return Quality(False, {}, f"the model's output cannot be assessed: {exc}")
    naive = bundle.meta.get("naive_forecast")  # the column of each row's value a horizon back
    ahead = bundle.meta.get("horizon") or "a horizon"  # in words: "24 steps (2 years)"
    past = (f"the value {ahead} earlier", test[naive]) if (
        bundle.forecasts and isinstance(naive, str) and naive in test.columns) else None
    return prediction_quality(test[target], predictions, train[target], classification=classification,
                              latest=None if classification else latest_value(bundle, train), naive=past)


def latest_value(bundle: Bundle, train: pd.DataFrame) -> float | None:
    """The target's last training value of a forecast of one series (times that repeat are several series, whose
    latest values differ), or None."""
    time, target = bundle.time_column, bundle.require_target()
    if not bundle.forecasts or time not in train.columns:
        return None
    labelled = train[train[target].notna()]
    times = time_values(labelled[time])
    if labelled.empty or times.duplicated().any():
        return None
    return float(labelled[target].loc[times.idxmax()])


def prediction_quality(truth: pd.Series, predictions: pd.DataFrame, y_train: pd.Series, *,
                       classification: bool, latest: float | None = None,
                       naive: tuple[str, pd.Series] | None = None) -> Quality:
    """The quality of ``predictions`` (``predictions.parquet``'s columns) against ``truth``, row by row (``latest``
    and ``naive``: a forecast's trivial predictions, ``regression_quality``)."""
    if len(predictions) != len(truth) or "prediction" not in predictions:
        return Quality(False, {}, "predictions do not line up with the test table")
    truth, predicted = truth.reset_index(drop=True), predictions["prediction"].reset_index(drop=True)
    if classification:
        proba = predictions[probability_columns(predictions)].reset_index(drop=True)
        return classification_quality(truth, predicted, proba if len(proba.columns) else None, y_train)
    return regression_quality(truth, predicted, y_train, latest=latest,
                              naive=(naive[0], naive[1].reset_index(drop=True)) if naive else None)


def clustering_quality(bundle: Bundle) -> Quality | None:
    """How well the groups of a clustering step's output separate: the silhouette of its labels on its table's numeric
    features, standardised (as the clustering services see them), recomputed here rather than taken from the service.
    Groups at or below ``SUBSTANTIAL_SILHOUETTE``, or a single group, are valid but need a person's review. None when
    the output cannot be read: the step's own checks judged it, and a doubt never fails a run."""
    from dagsmith_kit.unsupervised import cluster_labels, data_matrix, silhouette

    try:
        data, columns, values = data_matrix(bundle)
        labels = cluster_labels(bundle.predictions(), data)
    except (BundleError, ServiceError, OSError, ValueError):
        return None
    found = len(set(labels.tolist()) - {-1})
    score = silhouette(values, labels)
    metrics = {"n_clusters": float(found)} | ({} if score is None else {"silhouette": score})
    if found < 2:
        return Quality(True, metrics, review=f"every row fell into {'one group' if found else 'no group'}: the table "
                                             "shows no grouping by these columns.")
    if score is not None and score <= SUBSTANTIAL_SILHOUETTE:
        return Quality(True, metrics, review=f"the {found} groups barely separate (silhouette {score:.2f}; at "
                                             f"{SUBSTANTIAL_SILHOUETTE} or less a table shows no substantial "
                                             "grouping): read them as slices of a continuum rather than kinds of rows.")
    if yes_no := _yes_no_split(data, columns, values, labels):
        return Quality(True, metrics, review=f"the groups are the values of {' and '.join(yes_no)} and barely "
                                             "differ in anything else (scaled, a yes/no column stands apart from "
                                             "every measurement): they say what the table says already. Leave it out "
                                             "to group the rows by the other columns.")
    return Quality(True, metrics)


def _yes_no_split(data: pd.DataFrame, columns: list[str], values: np.ndarray, labels: np.ndarray) -> list[str]:
    """The two-valued columns whose values the groups are (adjusted Rand index ``SAME_GROUPS`` or more; a category's
    one-hot columns together) when the groups barely separate on the other columns; else none."""
    from dagsmith_kit.indicators import indicators
    from dagsmith_kit.unsupervised import silhouette

    grouped = labels != -1
    same = [c for c in columns if data[c].nunique() == 2
            and skm.adjusted_rand_score(pd.factorize(data[c])[0][grouped], labels[grouped]) >= SAME_GROUPS]
    rest = [i for i, c in enumerate(columns) if c not in same]
    score = silhouette(values[:, rest], labels) if same and rest else None
    if not same or (score is not None and score > SUBSTANTIAL_SILHOUETTE):
        return []
    # the category a one-hot column stands for, read from the columns as 0/1 again (the step's table is scaled)
    encoded = indicators(data[same].apply(lambda column: column.eq(column.max()).astype(int)), same)
    return [f"`{name}`" for name in dict.fromkeys(encoded[c].column if c in encoded else c for c in same)]
