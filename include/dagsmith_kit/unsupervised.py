"""What clustering, anomaly-detection and dimensionality-reduction services share.

They read the numeric feature columns of the whole ``data`` table (never the target or id columns),
write one prediction row per data row (``cluster``, or anomaly scores: see ``anomalies``), or replace the
numeric features with ``component_1..component_k``. scikit-learn is imported only where it is needed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from dagsmith_kit.bundle import MODEL_FILE, Bundle
from dagsmith_kit.insight import readable_number
from dagsmith_kit.indicators import Indicator, indicators, shown_as
from dagsmith_kit.service import ServiceError, transform_tables
from dagsmith_kit.transforms import service_name

#: silhouette is O(n^2): above this many rows it is estimated on a random sample of this size.
SILHOUETTE_SAMPLE = 5000


def numeric_features(inp: Bundle, frame: pd.DataFrame, *, allow_missing: bool = False) -> list[str]:
    """The numeric feature columns of ``frame``, checked to be usable (present, finite, complete)."""
    columns = inp.feature_columns(frame, numeric=True)
    if not columns:
        raise ServiceError("the table has no numeric feature columns; encode the categorical columns first")
    values = frame[columns].to_numpy(dtype=float)
    missing = [c for c, bad in zip(columns, np.isnan(values).any(axis=0)) if bad]
    if missing and not allow_missing:
        raise ServiceError(f"missing values in {len(missing)} column(s) ({', '.join(missing[:5])}); "
                           "impute or drop them first")
    if np.isinf(values).any():
        raise ServiceError("the numeric features hold infinite values; clean them first")
    return columns


def data_matrix(inp: Bundle, *, standardize: bool = True, max_rows: int | None = None,
                allow_missing: bool = False, min_rows: int = 3) -> tuple[pd.DataFrame, list[str], np.ndarray]:
    """The ``data`` table, its numeric feature columns and their values (standardized if asked).

    Unsupervised steps label every row of the whole table, so a bundle already split is refused.
    """
    if inp.is_split():
        raise ServiceError("this step labels every row of the whole 'data' table, but the bundle is already "
                           "split into train and test; run it before the train/test splitter")
    data = inp.table("data")
    columns = numeric_features(inp, data, allow_missing=allow_missing)
    if len(data) < min_rows:
        raise ServiceError(f"the table has {len(data)} rows; this step needs at least {min_rows}")
    if max_rows is not None and len(data) > int(max_rows):
        raise ServiceError(f"the table has {len(data)} rows, more than max_rows={max_rows} (this method's "
                           "memory and time grow quadratically); sample the rows first or raise max_rows")
    values = data[columns].to_numpy(dtype=float)
    if standardize:
        from sklearn.preprocessing import StandardScaler

        values = StandardScaler().fit_transform(values)
    return data, columns, values


class TableInput:
    """How an unsupervised model saw a table: its numeric feature columns, standardised by the training mean and
    deviation when the service asked ``data_matrix`` for that (found by comparing the values it used)."""

    def __init__(self, frame: pd.DataFrame, columns: list[str], values: np.ndarray):
        from sklearn.preprocessing import StandardScaler

        raw = frame[columns].to_numpy(dtype=float)
        self.columns, self.mean, self.scale = list(columns), None, None
        if np.shape(values) == raw.shape and np.allclose(values, raw, equal_nan=True):
            return
        scaler = StandardScaler().fit(raw)
        if not (np.shape(values) == raw.shape and np.allclose(values, scaler.transform(raw), equal_nan=True)):
            raise ValueError("the model was fitted on values other than the table's columns, as they are or "
                             "standardised")
        self.mean, self.scale = scaler.mean_, scaler.scale_

    def __call__(self, X: pd.DataFrame) -> np.ndarray:
        raw = X[self.columns].to_numpy(dtype=float)
        return raw if self.mean is None else (raw - self.mean) / self.scale


class ClusterModel:
    """A fitted clustering model that can label new rows (it has ``predict``), with how it reads a table."""

    def __init__(self, inputs: TableInput, model: Any):
        self.inputs, self.model = inputs, model

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return self.model.predict(self.inputs(X))


def save_row_model(out: Bundle, kind: str, frame: pd.DataFrame, columns: list[str], values: np.ndarray,
                   build: Callable[[TableInput], Any] | None, info: dict[str, Any] | None = None) -> None:
    """Save what labels or scores new rows the way this step did (``build(inputs)``), or record in ``model.json``
    why it cannot (no ``build``: the method labels only the rows it was fitted on)."""
    reason = (f"{service_name()} {'scores' if kind == 'anomaly' else 'labels'} only the rows it was fitted on; "
              "run it again on the new rows")
    if build is not None:
        try:
            model = build(TableInput(frame, columns, values))
            out.save_model(model, {"kind": kind, "features": columns, **(info or {})})
            return
        except ValueError as exc:
            reason = str(exc)
    (out.path / MODEL_FILE).unlink(missing_ok=True)
    out.write_model_info({"kind": kind, "can_score": False, "reason": reason})


def cluster_labels(predictions: pd.DataFrame, data: pd.DataFrame) -> np.ndarray:
    """The cluster label (-1 for noise) a clustering step predicted for every row of ``data``: what cluster
    evaluators score."""
    if "cluster" not in predictions.columns:
        raise ServiceError("the predictions hold no 'cluster' column; run a clustering step first")
    if len(predictions) != len(data):
        raise ServiceError(f"{len(predictions)} cluster labels for {len(data)} data rows")
    return predictions["cluster"].to_numpy(dtype=int)


def silhouette(values: np.ndarray, labels: np.ndarray, random_state: int = 42) -> float | None:
    """Silhouette of the non-noise points, or None when it is undefined (fewer than 2 clusters)."""
    from sklearn.metrics import silhouette_score

    keep = labels != -1
    values, labels = values[keep], labels[keep]
    if not 2 <= len(np.unique(labels)) <= len(labels) - 1:
        return None
    sample = SILHOUETTE_SAMPLE if len(labels) > SILHOUETTE_SAMPLE else None
    return float(silhouette_score(values, labels, sample_size=sample, random_state=random_state))


def clusters_by_silhouette(values: np.ndarray, fit: Callable[[int], Any], requested: Any,
                           max_clusters: int = 10) -> tuple[int, np.ndarray, str]:
    """The requested number of clusters k or, for "auto", the k between 2 and ``max_clusters`` whose clusters are
    best separated (highest silhouette); the labels ``fit(k)`` gave for it; and how k was chosen, in words."""
    n = len(values)
    if isinstance(requested, str) and requested.isdigit():
        requested = int(requested)
    if requested != "auto":
        if isinstance(requested, bool) or not isinstance(requested, int) or not 2 <= requested < n:
            raise ServiceError(f"the number of clusters must be 'auto' or an integer from 2 to {n - 1}, "
                               f"got {requested!r}")
        return requested, np.asarray(fit(requested), dtype=int), f"k = {requested}, as asked"
    candidates = range(2, min(int(max_clusters), n - 1) + 1)
    if not candidates:
        raise ServiceError(f"choosing the number of clusters needs max_clusters of at least 2 and 3 rows or more, "
                           f"got max_clusters={max_clusters} and {n} rows")
    tried = []
    for k in candidates:
        labels = np.asarray(fit(k), dtype=int)
        tried.append((silhouette(values, labels) or -1.0, k, labels))
    score, k, labels = max(tried, key=lambda t: (t[0], -t[1]))
    return k, labels, f"k = {k}, the best silhouette ({score:.3f}) of k = 2 to {candidates[-1]}"


def describe_clusters(frame: pd.DataFrame, columns: list[str], labels: np.ndarray, top: int = 3) -> list[str]:
    """What sets each cluster apart, in words: the features whose mean in the cluster differs most from the whole
    table's, in the table's standard deviations (e.g. "higher income (82,000 against 51,000 overall)"); a category's
    value by its share of rows, one value per category ("more type = Condo (64% against 12% overall)")."""
    values = frame[columns].astype(float).reset_index(drop=True)
    overall, spread = values.mean(), values.std(ddof=0).replace(0, np.nan)
    groups = indicators(values, columns)
    described = []
    for cluster in sorted(set(labels.tolist()) - {-1}):
        members = values[labels == cluster]
        shift = ((members.mean() - overall) / spread).dropna()
        named: dict[str, str] = {}  # per column as loaded, the trait that names it
        for c in shift.abs().sort_values(ascending=False).index:
            if len(named) == top:
                break
            if c not in groups:
                mean, usual = _shown(members[c].mean(), spread[c]), _shown(overall[c], spread[c])
                named[c] = f"{'higher' if shift[c] > 0 else 'lower'} {c} ({mean} against {usual} overall)"
            elif groups[c].column not in named:
                shown = _held_value(c, shift, groups)
                named[groups[c].column] = (f"{'more' if shift[shown] > 0 else 'fewer'} {shown_as(shown, groups)} "
                                           f"({members[shown].mean():.0%} against {overall[shown]:.0%} overall)")
        described.append(f"cluster {cluster} ({len(members)} rows, {len(members) / len(values):.0%}): "
                         + ("; ".join(named.values()) or "no feature sets it apart"))
    return described


def _held_value(strongest: str, shift: pd.Series, groups: dict[str, Indicator]) -> str:
    """The indicator a cluster is described by among its category's: the value it holds more of ("more plan =
    premium"), unless that is far weaker than the ``strongest`` shift, a value it lacks ("fewer type = house")."""
    held = max((c for c in shift.index if c in groups and groups[c].column == groups[strongest].column),
               key=lambda c: shift[c])
    return held if shift[held] > 0 and shift[held] >= abs(shift[strongest]) / 2 else strongest


def _shown(mean: float, spread: float) -> str:
    """A mean as a person reads it; one within rounding error of zero for its column's spread is 0 (a standardised
    column's mean is 1e-17, not a value)."""
    return readable_number(0.0 if abs(mean) < 1e-9 * spread else mean)


def write_clusters(out: Bundle, frame: pd.DataFrame, columns: list[str], values: np.ndarray, labels: Any,
                   title: str, metrics: dict[str, float] | None = None, extra: dict[str, Any] | None = None,
                   *, chosen: str | None = None, model: Any = None) -> dict:
    """Write ``cluster`` (plus ``extra`` columns) to predictions, cluster counts/silhouette to metrics, and to the
    report how the number of clusters was ``chosen`` and what sets each cluster apart (from ``frame``'s
    ``columns``, in the table's own units). A ``model`` that can label new rows (``predict``) is saved for scoring
    them; without one, ``model.json`` says this method cannot."""
    labels = np.asarray(labels, dtype=int)
    save_row_model(out, "clustering", frame, columns, values,
                   (lambda inputs: ClusterModel(inputs, model)) if hasattr(model, "predict") else None)
    found = sorted(set(labels.tolist()) - {-1})
    metrics = {"n_clusters": len(found), **(metrics or {})}
    if (labels == -1).any():
        metrics["noise_fraction"] = float((labels == -1).mean())
    score = silhouette(values, labels)
    if score is not None:
        metrics["silhouette"] = score
    out.write_predictions(pd.DataFrame({"cluster": labels, **(extra or {})}))
    out.write_metrics(metrics)
    noise = f"\n\n{int((labels == -1).sum())} rows belong to no cluster (noise)." if -1 in labels else ""
    out.append_report(f"## {title}\n\n" + (f"Number of clusters: {chosen}.\n\n" if chosen else "")
                      + "\n".join(f"- {k}: {v:.4g}" for k, v in metrics.items())
                      + "\n\nWhat sets each cluster apart:\n\n"
                      + "\n".join(f"- {line}" for line in describe_clusters(frame, columns, labels)) + noise)
    return metrics


def with_components(frame: pd.DataFrame, columns: list[str], components: np.ndarray) -> pd.DataFrame:
    """``frame`` with ``columns`` replaced by ``component_1..component_k`` (other columns kept)."""
    names = [f"component_{i + 1}" for i in range(components.shape[1])]
    kept = frame.drop(columns=columns).reset_index(drop=True)
    return pd.concat([kept, pd.DataFrame(components, columns=names)], axis=1)


def reduce_tables(inp: Bundle, out: Bundle, make_model: Callable[[int, int], Any]) -> Any:
    """Fit ``make_model(n_rows, n_features)`` on the training table's numeric features, replace them in
    every table by its components and write the explained variance (when the model has it) to metrics;
    returns the fitted model."""

    def fit(train: pd.DataFrame) -> tuple[list[str], Any]:
        columns = numeric_features(inp, train)
        return columns, make_model(len(train), len(columns)).fit(train[columns].to_numpy(dtype=float))

    def apply(frame: pd.DataFrame, state: tuple[list[str], Any]) -> pd.DataFrame:
        columns, model = state
        return with_components(frame, columns, model.transform(frame[columns].to_numpy(dtype=float)))

    columns, model = transform_tables(inp, out, fit, apply)
    final = model[-1] if hasattr(model, "steps") else model
    ratios = getattr(final, "explained_variance_ratio_", None)
    metrics = {"n_input_features": len(columns), "n_components": len(final.components_)}
    if ratios is None:  # NMF, factor analysis, ICA: no variance ratios, only components
        summary = (f"{len(columns)} numeric features -> {metrics['n_components']} components "
                   f"({type(final).__name__})")
    else:
        metrics.update({"explained_variance_ratio": float(np.sum(ratios)),
                        **{f"explained_variance_ratio_{i + 1}": float(r) for i, r in enumerate(ratios)}})
        summary = (f"{len(columns)} numeric features -> {len(ratios)} components explaining "
                   f"{metrics['explained_variance_ratio']:.1%} of the variance")
    out.write_metrics(metrics)
    out.append_report(f"## Dimensionality reduction\n\n{summary}\n\nWhat loads on each component:\n\n"
                      + "\n".join(f"- {line}" for line in describe_components(final.components_, columns, ratios)))
    return model


def describe_components(components: np.ndarray, columns: list[str], ratios: np.ndarray | None = None,
                        top: int = 3) -> list[str]:
    """Per component, the share of variance it explains (when known) and the features that load on it most, with
    their signed weights, so a person can name the component (e.g. "size: +0.58 petal length, +0.56 ...")."""
    described = []
    for i, weights in enumerate(np.asarray(components, dtype=float)):
        order = np.argsort(-np.abs(weights))[:top]
        share = f" ({ratios[i]:.1%} of the variance)" if ratios is not None else ""
        described.append(f"component_{i + 1}{share}: "
                         + ", ".join(f"{weights[j]:+.2f} {columns[j]}" for j in order))
    return described
