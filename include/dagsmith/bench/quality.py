"""Output quality of one finished run, computed by the benchmark itself from the run's final bundle.

The pipeline's own evaluator may be missing or wrong, so quality is recomputed here from the predictions and
the held-out table, with the same functions used for the peers' predictions. A run only counts as a
success when its outputs are valid: files present, numbers finite and, for supervised tasks, better than a
trivial predictor on the held-out rows.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn import metrics as skm
from sklearn.linear_model import LinearRegression

from dagsmith.execution.quality import Quality, supervised_quality
from dagsmith.models.catalog import TaskType
from dagsmith_kit import Bundle, BundleError
from dagsmith_kit.bundle import PREDICTIONS_FILE

#: Statistics the EDA reference recomputes with pandas, and the tolerance the protocol allows.
EDA_STATISTICS = ("count", "missing", "mean", "std", "min", "median", "max")
EDA_TOLERANCE = 1e-6


def final_bundle(workspace: Path) -> Bundle | None:
    """The last step's output bundle of a run (steps/NN with the highest NN), or None when no step finished."""
    steps = sorted((workspace / "steps").glob("[0-9][0-9]"))
    for folder in reversed(steps):
        try:
            return Bundle.open(folder)
        except BundleError:
            continue
    return None


def _unsupervised(bundle: Bundle, task_type: TaskType, labels: pd.Series | None) -> Quality:
    data = bundle.table("data")
    predictions = bundle.predictions()
    if len(predictions) != len(data):
        return Quality(False, {}, "predictions do not line up with the data table")
    aligned = labels is not None and len(labels) == len(predictions)
    if task_type is TaskType.CLUSTERING:
        clusters = predictions["cluster"].to_numpy()
        found = len(set(clusters) - {-1})
        result = {"clusters": float(found)}
        numeric = data.select_dtypes("number").drop(columns=[c for c in data.columns if c == "cluster"],
                                                      errors="ignore").dropna(axis=1)
        if found >= 2 and numeric.shape[1]:
            standardised = (numeric - numeric.mean()) / numeric.std(ddof=0).replace(0, 1)
            result["silhouette"] = skm.silhouette_score(standardised, clusters, sample_size=min(len(clusters), 5000),
                                                        random_state=0)
        if aligned:
            truth = labels.astype(str).to_numpy()
            result["adjusted_rand"] = skm.adjusted_rand_score(truth, clusters)
            result["normalized_mutual_info"] = skm.normalized_mutual_info_score(truth, clusters)
        return Quality(found >= 2, result, None if found >= 2 else "fewer than two clusters")
    scores = predictions["anomaly_score"].to_numpy(dtype=float)
    if not np.isfinite(scores).all():
        return Quality(False, {}, "non-finite anomaly scores")
    flags = predictions["is_anomaly"].astype(bool).to_numpy()
    result = {"anomaly_fraction": float(flags.mean())}
    if aligned:
        rare = labels.astype(str).to_numpy() == labels.astype(str).value_counts().idxmin()
        result["anomaly_roc_auc"] = skm.roc_auc_score(rare, scores)
        result["anomaly_average_precision"] = skm.average_precision_score(rare, scores)
        result["anomaly_precision"] = float(rare[flags].mean()) if flags.any() else 0.0
        result["anomaly_recall"] = float(flags[rare].mean())
    return Quality(True, result)


def _reduction(bundle: Bundle, frame: pd.DataFrame, labels: pd.Series | None) -> Quality:
    """Component columns present and finite; how much of the data a linear map from them reconstructs; with labels,
    how well they keep the groups apart."""
    tables = bundle.tables()
    components = {name: [c for c in frame.columns if str(c).startswith("component_")] for name, frame in tables.items()}
    if not tables or not all(components.values()):
        return Quality(False, {}, "no component columns in the reduced table")
    name = next(iter(tables))
    values = tables[name][components[name]].to_numpy(dtype=float)
    if not np.isfinite(values).all():
        return Quality(False, {}, "non-finite components")
    result = {"components": float(values.shape[1])}
    metrics = bundle.metrics()
    if "explained_variance_ratio" in metrics:
        result["explained_variance_ratio"] = float(metrics["explained_variance_ratio"])
    r2 = reconstruction_r2(values, frame)
    if r2 is not None:
        result["reconstruction_r2"] = r2
    if labels is not None and len(labels) == len(values) and labels.nunique() > 1:
        result["label_silhouette"] = skm.silhouette_score(values, labels.astype(str),
                                                          sample_size=min(len(values), 5000),
                                                          random_state=0)
    return Quality(True, result)


def reconstruction_r2(components: np.ndarray, frame: pd.DataFrame) -> float | None:
    """R² (variance-weighted) of the standardised numeric columns rebuilt linearly from the components: for PCA, the
    share of variance its components explain; comparable across reducers, linear or not. None when the rows differ."""
    numeric = _numeric(frame).astype("float64")
    numeric = numeric.loc[:, numeric.std() > 0]
    if numeric.empty or len(numeric) != len(components):
        return None
    standardised = ((numeric - numeric.mean()) / numeric.std(ddof=0)).fillna(0.0).to_numpy()
    rebuilt = LinearRegression().fit(components, standardised).predict(components)
    return float(skm.r2_score(standardised, rebuilt, multioutput="variance_weighted"))


def _statistics_reference(numeric: pd.DataFrame) -> dict[str, float]:
    """``stat.<column>.<statistic>`` for every (numeric) column, computed by pandas."""
    reference = {}
    for column in numeric.columns:
        series = numeric[column].astype("float64")
        figures = {"count": series.count(), "missing": series.isna().sum(), "mean": series.mean(),
                   "std": series.std(ddof=1), "min": series.min(), "median": series.median(), "max": series.max()}
        reference.update({f"stat.{column}.{name}": float(figures[name]) for name in EDA_STATISTICS})
    return reference


def _correlation_reference(frame: pd.DataFrame, key: str) -> list[float]:
    """A ``corr.<a>.<b>`` figure as pandas computes it, by either method the correlation services offer."""
    names = key.removeprefix("corr.")
    pairs = [(names[:at], names[at + 1:]) for at, ch in enumerate(names) if ch == "."]  # names may hold dots
    pair = next(([x, y] for x, y in pairs if x in frame and y in frame), None)
    if pair is None:
        return []
    table = frame[pair].astype("float64")
    return [float(table.corr(method=method).iloc[0, 1]) for method in ("pearson", "spearman")]


def _outlier_reference(frame: pd.DataFrame, key: str) -> list[float]:
    """An ``outliers.<column>.iqr|zscore`` count by the documented default rules (Tukey k=1.5, |z| > 3)."""
    column, _, rule = key.removeprefix("outliers.").rpartition(".")
    if column not in frame or rule not in ("iqr", "zscore"):
        return []
    values = frame[column].astype("float64").dropna()
    if rule == "iqr":
        q1, q3 = values.quantile(0.25), values.quantile(0.75)
        return [float(((values < q1 - 1.5 * (q3 - q1)) | (values > q3 + 1.5 * (q3 - q1))).sum())]
    std = values.std(ddof=1)
    return [float(((values - values.mean()).abs() > 3 * std).sum()) if std > 0 else 0.0]


def _numeric(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[[c for c in frame.columns
                  if pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])]]


def eda_quality(metrics: dict, frame: pd.DataFrame) -> Quality:
    """The run's column statistics (``stat.*``), correlations (``corr.*``) and outlier counts (``outliers.*``)
    against pandas on the data as given, within 1e-6. Figures of other kinds are not checked."""
    numeric = _numeric(frame)
    statistics = _statistics_reference(numeric)
    checked, wrong = 0, []
    for key, value in metrics.items():
        if key.startswith("stat."):
            expected = [statistics[key]] if key in statistics and not math.isnan(statistics[key]) else []
        elif key.startswith("corr."):
            expected = _correlation_reference(numeric, key)
        elif key.startswith("outliers.") and not key.startswith("outliers.total"):
            expected = _outlier_reference(numeric, key)
        else:
            continue
        if not expected:
            continue
        checked += 1
        if not any(math.isclose(value, e, rel_tol=EDA_TOLERANCE, abs_tol=EDA_TOLERANCE) for e in expected):
            wrong.append(key)
    result = {"statistics_checked": float(checked), "statistics_wrong": float(len(wrong)),
              "statistics_match": float(checked > 0 and not wrong)}
    if not checked:
        return Quality(False, result, "no statistics, correlations or outlier counts to check")
    if wrong:
        return Quality(False, result, f"{len(wrong)} figures differ from pandas, e.g. {wrong[0]}")
    return Quality(True, result)


def assess(workspace: Path, task_type: TaskType, frame: pd.DataFrame, labels: pd.Series | None) -> Quality:
    """Validity and quality of a completed run's outputs."""
    bundle = final_bundle(workspace)
    if bundle is None:
        return Quality(False, {}, "no step produced a bundle")
    metrics = bundle.metrics()
    if any(isinstance(v, float) and not math.isfinite(v) for v in metrics.values()):
        return Quality(False, {}, "non-finite metrics")
    try:
        if task_type is TaskType.EXPLORATORY_ANALYSIS:
            return eda_quality(metrics, frame)
        if task_type is TaskType.DIMENSIONALITY_REDUCTION:
            return _reduction(bundle, frame, labels)
        if not (bundle.path / PREDICTIONS_FILE).is_file():
            return Quality(False, {}, "no predictions")
        if task_type.supervised:
            return supervised_quality(bundle, classification=task_type.classification)
        return _unsupervised(bundle, task_type, labels)
    except (KeyError, ValueError, BundleError) as exc:
        return Quality(False, {}, f"outputs could not be assessed: {exc}")
