"""A weighted average of trained models: what a modelling search hands on when blending its candidates wins.

The pipeline decides on a blend from the candidates' out-of-fold predictions alone (it never loads their
models, which are untrusted). It writes ``ensemble.json`` beside copies of the members' model files; the next
step's ``Bundle.load_model`` builds this estimator from them, inside that step's sandbox. It behaves as any
scikit-learn estimator: cloning and refitting it refits every member.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone


class _Blend(BaseEstimator):
    """Members are ``(estimator, features)`` pairs; each sees its own feature columns of the table it is given.

    ``members_`` holds the fitted ones: ``fit`` refits clones, ``load`` sets the members a search trained."""

    def __init__(self, members: list[tuple[Any, list[str]]], weights: list[float]):
        self.members = members
        self.weights = weights

    @property
    def feature_names_in_(self) -> np.ndarray:
        return np.asarray(list(dict.fromkeys(c for _, features in self.members for c in features)), dtype=object)

    @property
    def n_features_in_(self) -> int:
        return len(self.feature_names_in_)

    def fit(self, X: pd.DataFrame, y: Any) -> _Blend:
        self.members_ = [(clone(estimator).fit(X[features], y), features) for estimator, features in self.members]
        return self


class BlendedRegressor(RegressorMixin, _Blend):
    """The weighted mean of the members' predictions."""

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        total = sum(self.weights)
        return sum(w * np.asarray(m.predict(X[f]), dtype=float)
                   for (m, f), w in zip(self.members_, self.weights, strict=True)) / total


class BlendedClassifier(ClassifierMixin, _Blend):
    """The weighted mean of the members' class probabilities; the most probable class is the prediction."""

    @property
    def classes_(self) -> np.ndarray:
        return self.members_[0][0].classes_

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        total, classes = sum(self.weights), list(self.classes_)
        blended = np.zeros((len(X), len(classes)))
        for (model, features), weight in zip(self.members_, self.weights, strict=True):
            proba = model.predict_proba(X[features])
            order = [list(model.classes_).index(c) for c in classes]
            blended += weight * proba[:, order]
        return blended / total

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return self.classes_[self.predict_proba(X).argmax(axis=1)]


def load(manifest_file: Path, members_dir: Path) -> BlendedClassifier | BlendedRegressor:
    """The blend a bundle's ``ensemble.json`` describes, its members loaded from their model files in
    ``members_dir`` (by file name only: the manifest names no other folder)."""
    import joblib

    manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    members = [(joblib.load(members_dir / Path(m["model"]).name), [str(c) for c in m["features"]])
               for m in manifest["members"]]
    weights = [float(m["weight"]) for m in manifest["members"]]
    blend = (BlendedClassifier if manifest["kind"] == "classifier" else BlendedRegressor)(members, weights)
    blend.members_ = members
    return blend
