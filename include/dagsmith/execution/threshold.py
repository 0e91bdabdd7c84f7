"""Where a binary classifier draws the line between its two classes.

A model searched by ROC AUC ranks rows well, but its labels come from even odds: with a rare class (a few
percent of tips, bad loans, remote workers) every label may be the common class's, and a person acting on
the labels would act on nobody. The line is drawn instead where the model's out-of-fold predictions on the
training rows score best (macro F1 unless the goal named another measure of labels), and moved only when
that beats even odds there by ``MARGIN``. The held-out rows are never looked at. Every candidate line is scored
from one sort of the probabilities (``_scores``), not by a metric call per line: a hundred of scikit-learn's calls
took over a second of every run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from dagsmith.execution.blending import Blend, out_of_fold
from dagsmith_kit import Bundle, BundleError
from dagsmith_kit.bundle import PROBA_PREFIX, probability_columns
from dagsmith_kit.search import MARGIN

#: What labels are chosen by, for each metric a search may be judged by; metrics missing here keep even odds
#: (accuracy is best served by them; recall or precision alone would push the line to one end).
OBJECTIVE = {"roc_auc": "f1_macro", "f1_macro": "f1_macro", "balanced_accuracy": "balanced_accuracy", "f1": "f1"}
#: Candidate lines: this many quantiles of the rare class's out-of-fold probability.
STEPS = 99


@dataclass(frozen=True)
class Threshold:
    """The rare class is predicted from ``at`` on; ``score`` is the objective there, ``even`` at even odds."""

    rare: str
    at: float
    objective: str
    score: float
    even: float

    def describe(self) -> str:
        return (f"a row is labelled '{self.rare}' when its probability is at least {self.at:.3f}, where the training "
                f"rows' out-of-fold predictions score {self.objective} {self.score:.4f} (even odds: {self.even:.4f})")


def _odds(proba: pd.DataFrame, rare: str) -> np.ndarray:
    """The rare class's share of each row's probabilities (``proba_<label>`` columns)."""
    columns = probability_columns(proba)
    values = proba[columns].to_numpy(dtype=float)
    rare_at = [c.removeprefix(PROBA_PREFIX) for c in columns].index(rare)
    return values[:, rare_at] / np.clip(values.sum(axis=1), 1e-12, None)


def _scores(objective: str, is_rare: np.ndarray, odds: np.ndarray, lines: np.ndarray) -> np.ndarray:
    """The objective at each line when rows from the line on are labelled rare: F1 of the rare class (``f1``),
    balanced accuracy, or macro F1 over the two classes, with a class never predicted nor present scoring 0."""
    rare_odds, common_odds = np.sort(odds[is_rare]), np.sort(odds[~is_rare])
    positives, negatives = len(rare_odds), len(common_odds)
    hits = positives - np.searchsorted(rare_odds, lines, side="left")  # rare rows at or above the line
    false_alarms = negatives - np.searchsorted(common_odds, lines, side="left")
    misses, rejections = positives - hits, negatives - false_alarms
    if objective == "balanced_accuracy":
        return (hits / positives + rejections / negatives) / 2
    errors = false_alarms + misses

    def f1(right: np.ndarray) -> np.ndarray:
        return np.divide(2 * right, 2 * right + errors, out=np.zeros(len(lines)), where=2 * right + errors > 0)

    return f1(hits) if objective == "f1" else (f1(hits) + f1(rejections)) / 2


def choose(metric: str, y: pd.Series, proba: pd.DataFrame) -> Threshold | None:
    """The line for out-of-fold probabilities ``proba`` (``proba_<label>`` columns) of the training labels ``y``,
    or None when even odds are as good (within ``MARGIN``), the metric keeps them or there are not two classes."""
    columns = probability_columns(proba)
    objective = OBJECTIVE.get(metric)
    if objective is None or len(columns) != 2:
        return None
    truth = y.astype(str).to_numpy()
    labels = [c.removeprefix(PROBA_PREFIX) for c in columns]
    counts = pd.Series(truth).value_counts()
    if set(counts.index) != set(labels):
        return None
    rare = str(counts.index[-1])
    odds = _odds(proba, rare)
    lines = np.unique(np.quantile(odds, np.linspace(0.01, 0.99, STEPS)))
    scores = _scores(objective, truth == rare, odds, np.append(lines, 0.5))
    even, best = float(scores[-1]), int(np.argmax(scores[:-1]))
    score = float(scores[best])
    return Threshold(rare, float(lines[best]), objective, score, even) if score > even + MARGIN else None


def _handed_on(blend: Blend | None, best: Path, outputs: dict[str, Path], rows: int) -> pd.DataFrame | None:
    """The out-of-fold probabilities of the model the search hands on: the blend's weighted average, or the best's."""
    weights = blend.weights if blend else {name: 1.0 for name, output in outputs.items() if output == best}
    read = {name: out_of_fold(outputs[name], rows) for name in weights}
    frames = {name: frame for name, frame in read.items() if frame is not None}
    if not frames or len(frames) < len(read):
        return None
    columns = probability_columns(next(iter(frames.values())))
    if any(probability_columns(frame) != columns or not frame.index.equals(frames[next(iter(frames))].index)
           for frame in frames.values()):
        return None
    return sum(frames[name][columns] * weight for name, weight in weights.items())


def relabel(metric: str, source: Path, best: Path, outputs: dict[str, Path], blend: Blend | None) -> Threshold | None:
    """Draw the line for the model handed on in ``best`` (its output bundle, ``source`` the bundle the search read)
    and relabel its held-out predictions by it; None when the labels stay at even odds."""
    if metric not in OBJECTIVE:
        return None
    try:
        inp = Bundle.open(source)
        y = inp.table("train")[inp.require_target()]
        bundle = Bundle.open(best)
        predictions = bundle.predictions()
    except (BundleError, KeyError, OSError, ValueError):
        return None
    oof = _handed_on(blend, best, outputs, len(y))
    if oof is None or probability_columns(predictions) != probability_columns(oof):
        return None
    line = choose(metric, y.iloc[oof.index], oof)
    if line is None:
        return None
    kinds = {str(value): value for value in y.unique()}
    common = next(label for label in kinds if label != line.rare)
    chosen = np.where(_odds(predictions, line.rare) >= line.at, line.rare, common)
    predictions["prediction"] = pd.Series([kinds[c] for c in chosen], index=predictions.index, dtype=y.dtype)
    bundle.write_predictions(predictions)
    bundle.write_metrics({"decision_threshold": round(line.at, 6)})
    return line
