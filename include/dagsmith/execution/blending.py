"""Blending a model search's candidates: their average is handed on when it validates better than the best alone.

Every candidate writes the predictions its chosen configuration made on the training rows it did not see
(``dagsmith_kit.search.VALIDATION_FILE``). Weights are chosen greedily on those, the way Caruana et al. build
ensembles from a library of models: start from the best candidate, then add (with replacement) whichever
candidate improves the blend's score most. The blend is kept only when it beats the best single candidate on
the same predictions by ``MARGIN``. Nothing here loads a model: candidates are untrusted code, so their
predictions are read as data and the blended model is assembled from ``ensemble.json`` inside the next step's
sandbox (``dagsmith_kit.ensemble``).
"""

from __future__ import annotations

import json
import math
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from dagsmith_kit.bundle import (ENSEMBLE_FILE, MEMBERS_DIR, MODEL_FILE, PREDICTIONS_FILE, PROBA_PREFIX, Bundle,
                                 BundleError, probability_columns)
from dagsmith_kit.search import MARGIN, SEARCH_FILE, VALIDATION_FILE, score_predictions

#: Greedy additions at most (a member may be added more than once, which is how weights arise).
ROUNDS = 10


@dataclass(frozen=True)
class Blend:
    """The members' weights (summing to 1) and the blend's score beside the best single candidate's."""

    weights: dict[str, float]
    score: float
    best: str
    best_score: float

    def label(self) -> str:
        """The blend as a model's name is shown: its members with their shares."""
        return " and ".join(f"{name} ({weight:.0%})" for name, weight in self.weights.items())

    def describe(self, metric: str) -> str:
        members = ", ".join(f"{name} {weight:.2f}" for name, weight in self.weights.items())
        return (f"a weighted average of {len(self.weights)} models ({members}): validation {metric} "
                f"{self.score:.4f} on the training rows' out-of-fold predictions, against {self.best_score:.4f} "
                f"for '{self.best}' alone")


def _value_columns(frame: pd.DataFrame) -> list[str]:
    return probability_columns(frame) or ["prediction"]


def _readable(frame: pd.DataFrame, columns: list[str]) -> bool:
    try:
        values = frame[columns].to_numpy(dtype=float)
    except (KeyError, ValueError, TypeError):
        return False
    return bool(np.isfinite(values).all())


def out_of_fold(output: Path, rows: int) -> pd.DataFrame | None:
    """A candidate's out-of-fold predictions indexed by training row, or None when it cannot join a blend: it
    wrote no predictions, model or feature list, or they are malformed (its output is untrusted)."""
    if not (output / MODEL_FILE).is_file() or not _features(output):
        return None
    try:
        frame = pd.read_parquet(output / VALIDATION_FILE)
        positions = frame["row"].to_numpy()
    except (OSError, ValueError, KeyError, ImportError):
        return None
    if (not len(frame) or positions.dtype.kind not in "iu" or positions.min() < 0 or positions.max() >= rows
            or len(set(positions)) != len(positions) or not _readable(frame, _value_columns(frame))):
        return None
    return frame.set_index("row").sort_index()


def _mix(frames: dict[str, pd.DataFrame], counts: Counter, columns: list[str]) -> pd.DataFrame:
    total = sum(counts.values())
    return sum(frames[name][columns] * (count / total) for name, count in counts.items())


def choose(metric: str, y: pd.Series, frames: dict[str, pd.DataFrame]) -> Blend | None:
    """The blend of candidates (name → out-of-fold predictions) that validates best, or None when no blend of
    two or more beats the best candidate alone; ``y`` is the training target."""
    if len(frames) < 2:
        return None
    columns = _value_columns(next(iter(frames.values())))
    if any(_value_columns(frame) != columns for frame in frames.values()):
        return None  # a classifier without probabilities, or members that saw different classes
    rows = sorted(set.intersection(*(set(frame.index) for frame in frames.values())))
    if not rows:
        return None
    frames = {name: frame.loc[rows] for name, frame in frames.items()}
    truth = y.iloc[rows].reset_index(drop=True)

    def score(counts: Counter) -> float:
        try:
            value = score_predictions(metric, truth, _mix(frames, counts, columns).reset_index(drop=True))
        except (ValueError, KeyError):  # e.g. a class absent from these rows
            return -math.inf
        return value if math.isfinite(value) else -math.inf

    alone = {name: score(Counter([name])) for name in frames}
    best = max(alone, key=lambda name: alone[name])
    counts, chosen, chosen_score = Counter([best]), Counter([best]), alone[best]
    for _ in range(ROUNDS - 1):
        step_score, name = max((score(counts + Counter([name])), name) for name in frames)
        counts[name] += 1
        if step_score > chosen_score:
            chosen, chosen_score = Counter(counts), step_score
    if len(chosen) < 2 or not chosen_score > alone[best] + MARGIN:
        return None
    total = sum(chosen.values())
    weights = {name: count / total for name, count in chosen.most_common()}
    return Blend(weights, chosen_score, best, alone[best])


def _features(output: Path) -> list[str]:
    """The feature columns a candidate was trained on, as its search recorded them."""
    try:
        features = json.loads((output / SEARCH_FILE).read_text(encoding="utf-8")).get("features")
    except (OSError, ValueError, AttributeError):
        return []
    return [str(c) for c in features] if isinstance(features, list) else []


def _held_out(blend: Blend, outputs: dict[str, Path], y: pd.Series) -> pd.DataFrame | None:
    """The blend's predictions on the test rows, from its members' predictions (None when they do not line up)."""
    frames = {}
    for name in blend.weights:
        try:
            frames[name] = pd.read_parquet(outputs[name] / PREDICTIONS_FILE)
        except (OSError, ValueError, ImportError):
            return None
    first = frames[blend.best]
    columns = _value_columns(first)
    if any(len(f) != len(first) or _value_columns(f) != columns or not _readable(f, columns) for f in frames.values()):
        return None
    mixed = sum(frames[name][columns].astype(float) * weight for name, weight in blend.weights.items())
    if columns == ["prediction"]:
        return mixed
    labels = {str(value): value for value in y.unique()}
    winners = [column.removeprefix(PROBA_PREFIX) for column in mixed[columns].idxmax(axis=1)]
    return pd.DataFrame({"prediction": pd.Series([labels.get(w, w) for w in winners], dtype=y.dtype), **mixed})


def _hand_on(blend: Blend, base: Path, outputs: dict[str, Path], predictions: pd.DataFrame, metric: str) -> None:
    """Make the chosen candidate's output bundle carry the blend: its predictions, ``ensemble.json`` and copies
    of the members' model files (loaded, if ever, by the next step in its sandbox)."""
    bundle = Bundle.open(base)
    members_dir = bundle.path / MEMBERS_DIR
    members_dir.mkdir(exist_ok=True)
    members = []
    for name, weight in blend.weights.items():
        shutil.copyfile(outputs[name] / MODEL_FILE, members_dir / f"{name}.joblib")
        members.append({"name": name, "model": f"{MEMBERS_DIR}/{name}.joblib", "features": _features(outputs[name]),
                        "weight": round(weight, 6)})
    kind = "regressor" if list(predictions.columns) == ["prediction"] else "classifier"
    (bundle.path / ENSEMBLE_FILE).write_text(json.dumps({"kind": kind, "metric": metric, "score": blend.score,
                                                          "members": members}, indent=2), encoding="utf-8")
    bundle.write_predictions(predictions)
    bundle.write_metrics({"blend_validation_score": round(blend.score, 6),
                          "blend_best_single_score": round(blend.best_score, 6)})


def blend(metric: str, source: Path, base: Path, outputs: dict[str, Path]) -> Blend | None:
    """Blend the completed candidates (name → output bundle) when that validates better, writing the blend into
    ``base``, the output the search hands on; ``source`` is the bundle the candidates read."""
    try:
        inp = Bundle.open(source)
        y = inp.table("train")[inp.require_target()]
    except (BundleError, KeyError, OSError, ValueError):
        return None
    frames = {name: frame for name, output in outputs.items() if (frame := out_of_fold(output, len(y))) is not None}
    chosen = choose(metric, y, frames)
    predictions = _held_out(chosen, outputs, y) if chosen else None
    if chosen is None or predictions is None:
        return None
    _hand_on(chosen, base, outputs, predictions, metric)
    return chosen
