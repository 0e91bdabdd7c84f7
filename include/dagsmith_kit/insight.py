"""Helpers shared by the EDA, plotting and reporting services (the "insight" group).

Nothing here imports matplotlib at module level: services set the ``Agg`` backend themselves before
importing pyplot, and :func:`save_figure` only closes what they drew.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dagsmith_kit.bundle import PROBA_PREFIX, Bundle, probabilities_by_label, probability_columns
from dagsmith_kit.service import ServiceError


def analysis_table(bundle: Bundle) -> pd.DataFrame:
    """The whole dataset: ``data`` before a split, ``train`` and ``test`` concatenated after one."""
    tables = bundle.tables()
    if len(tables) == 1:
        return next(iter(tables.values()))
    return pd.concat(list(tables.values()), ignore_index=True)


def is_numeric(series: pd.Series) -> bool:
    """Numeric for statistics and plots: numbers, but not booleans (those are treated as categories)."""
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def described_columns(bundle: Bundle, frame: pd.DataFrame, *, numeric: bool | None = None) -> list[str]:
    """Columns worth describing: every column but the id columns and those the person ruled out (the target
    included)."""
    ids = set(bundle.id_columns) | set(bundle.excluded_columns)
    columns = [c for c in frame.columns if c not in ids]
    if numeric is None:
        return columns
    return [c for c in columns if is_numeric(frame[c]) == numeric]


def save_figure(out: Bundle, fig: Any, name: str, *, dpi: int = 110) -> Path:
    """Save ``fig`` as ``artifacts/<name>`` in the output bundle, close it, and return the file."""
    import matplotlib.pyplot as plt

    path = out.artifact_path(name)
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=dpi)
    plt.close(fig)
    return path


def grid_shape(count: int, max_cols: int = 4) -> tuple[int, int]:
    """Rows and columns of a subplot grid large enough for ``count`` panels."""
    cols = max(1, min(max_cols, count))
    return int(np.ceil(count / cols)), cols


def markdown_table(headers: list[str], rows: list[list[Any]]) -> str:
    """A GitHub-flavoured Markdown table; floats are shown with 6 significant digits."""

    def cell(value: Any) -> str:
        if isinstance(value, (float, np.floating)):
            return "" if np.isnan(value) else f"{value:.6g}"
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def readable_number(value: float) -> str:
    """A number as a person reads it in a sentence: thousands separated, else four significant digits."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def finite_metrics(values: dict[str, Any]) -> dict[str, float]:
    """Keep only the finite numbers (metrics.json holds numbers, and NaN is not valid JSON)."""
    cleaned = {}
    for key, value in values.items():
        number = float(value)
        if np.isfinite(number):
            cleaned[key] = number
    return cleaned


def predicted_table(bundle: Bundle, column: str, made_by: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The table predictions were made for (``test`` after a split, else ``data``) and the predictions, checked to
    hold ``column`` (which ``made_by``, e.g. "a clustering step", writes) and one row per row of the table."""
    frame = bundle.table("test" if bundle.is_split() else "data")
    predictions = bundle.predictions()
    if column not in predictions.columns:
        raise ServiceError(f"predictions.parquet has no '{column}' column; run {made_by} first")
    if len(predictions) != len(frame):
        raise ServiceError(f"{len(predictions)} predictions for {len(frame)} rows")
    return frame, predictions


def classification_results(bundle: Bundle) -> tuple[np.ndarray, pd.DataFrame]:
    """The test labels (as strings) and the predictions of a classifier, checked to line up."""
    target = bundle.require_target()
    if bundle.predicts_numbers or "classification" not in (bundle.task_type or "classification"):
        raise ServiceError(f"this step is for classification, but the task is {bundle.task_type}")
    if not bundle.is_split():
        raise ServiceError("this step needs a train/test split: predictions are compared with the test labels")
    y_true = bundle.table("test")[target].astype(str).to_numpy()
    predictions = bundle.predictions()
    if len(predictions) != len(y_true):
        raise ServiceError(f"{len(predictions)} predictions for {len(y_true)} test rows")
    if "prediction" not in predictions.columns:
        raise ServiceError("predictions.parquet has no 'prediction' column (is this a classifier's output?)")
    return y_true, predictions


def class_probabilities(predictions: pd.DataFrame, *, by_label: bool = False) -> tuple[list[str], np.ndarray]:
    """The class labels of a classifier's ``proba_<label>`` columns and the matrix of those probabilities, in the
    model's class order, or with ``by_label`` in the labels' order as text (``probabilities_by_label``)."""
    columns = probability_columns(predictions)
    if not columns:
        raise ServiceError("the predictions have no proba_ columns: the model gave no probabilities")
    labels, frame = (probabilities_by_label(predictions) if by_label
                     else ([c.removeprefix(PROBA_PREFIX) for c in columns], predictions[columns]))
    return labels, frame.to_numpy(dtype=float)


def normalised_probabilities(y_true: np.ndarray, predictions: pd.DataFrame) -> tuple[list[str], np.ndarray]:
    """:func:`class_probabilities` in the labels' order with each row rescaled to sum to 1, refused unless every test
    label has a ``proba_`` column (scores such as log loss and Brier need the true class's probability)."""
    labels, proba = class_probabilities(predictions, by_label=True)
    unseen = sorted(set(y_true) - set(labels))
    if unseen:
        raise ServiceError(f"test labels without a proba_ column: {', '.join(unseen[:5])}")
    if not np.isfinite(proba).all():
        raise ServiceError("the proba_ columns hold missing or infinite values")
    return labels, proba / np.clip(proba.sum(axis=1, keepdims=True), 1e-12, None)


def binary_scores(y_true: np.ndarray, predictions: pd.DataFrame, pos_label: Any,
                  what: str) -> tuple[np.ndarray, np.ndarray, str]:
    """For a binary curve: whether each test label is the positive class, the positive class's predicted
    probability, and that class (``pos_label``, else the model's second class). More classes are refused."""
    labels, proba = class_probabilities(predictions)
    if len(labels) != 2 or len(set(y_true)) > 2:
        classes = max(len(labels), len(set(y_true)))
        raise ServiceError(f"{what} needs a binary target, but there are {classes} classes")
    positive = str(pos_label) if pos_label is not None else labels[1]
    if positive not in labels:
        raise ServiceError(f"pos_label {positive!r} is not one of the classes {labels}")
    return y_true == positive, proba[:, labels.index(positive)], positive


def binary_results(bundle: Bundle, pos_label: Any, what: str) -> tuple[np.ndarray, np.ndarray, str]:
    """:func:`binary_scores` of a classifier's test predictions (:func:`classification_results`): what a binary
    curve or threshold is drawn from."""
    y_true, predictions = classification_results(bundle)
    return binary_scores(y_true, predictions, pos_label, what)


def regression_results(bundle: Bundle) -> tuple[pd.Series, pd.Series]:
    """The test target and a regressor's predictions as floats (gaps kept as NaN), checked to line up."""
    target = bundle.require_target()
    if bundle.task_type is not None and not bundle.predicts_numbers:
        raise ServiceError(f"this step is for regression, but the task is {bundle.task_type}")
    if not bundle.is_split():
        raise ServiceError("this step needs a train/test split: predictions are compared with the test target")
    test = bundle.table("test")
    if not is_numeric(test[target]):
        raise ServiceError(f"this step needs a numeric target, but '{target}' is {test[target].dtype}")
    predictions = bundle.predictions()
    if len(predictions) != len(test):
        raise ServiceError(f"{len(predictions)} predictions for {len(test)} test rows")
    if "prediction" not in predictions.columns or not is_numeric(predictions["prediction"]):
        raise ServiceError("predictions.parquet has no numeric 'prediction' column (is this a regressor's output?)")
    return test[target].astype("float64").reset_index(drop=True), predictions["prediction"].astype("float64")


def save_text_artifact(out: Bundle, name: str, text: str) -> Path:
    """Write ``text`` (JSON, CSV) as ``artifacts/<name>`` in the output bundle and return the file."""
    path = out.artifact_path(name)
    path.write_text(text, encoding="utf-8")
    return path
