"""A forecaster that learns how far the target moves from its value a horizon back, and predicts on its own scale.

A series that wanders or trends (a share price, a subsidy growing year on year) reaches levels in the forecast
period that it never had in training, and a tree model of the level cannot predict beyond the levels it saw. The
change over the horizon stays within the range it had: learning it, and adding it to the value a horizon back (the
naive forecast, a feature of every forecast with the target's past), follows the series wherever it goes, and a
model that learns no change at all is the naive forecast itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dagsmith_kit.target_transform import TargetTransform


class PastChange(TargetTransform):
    """``regressor`` fitted on y - X[column]; predictions are X[column] plus its predictions. ``timeless`` are
    features the change is not learnt from: the time as a trend, since a change that grows with the date would be
    extrapolated into every forecast (the level a horizon back already carries where the series has got to)."""

    def __init__(self, regressor: Any, column: str, timeless: tuple[str, ...] = ()):
        self.regressor = regressor
        self.column = column
        self.timeless = timeless

    def _learnt(self, y: np.ndarray, X) -> np.ndarray:
        return y - X[self.column].to_numpy(dtype=float)

    def _restored(self, predicted: np.ndarray, X) -> np.ndarray:
        return X[self.column].to_numpy(dtype=float) + predicted

    def _inputs(self, X):
        return X.drop(columns=[c for c in self.timeless if c in X.columns])
