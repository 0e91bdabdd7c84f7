"""A forecaster that learns how far the target moves from its value a horizon back, and predicts on its own scale.

A series that wanders or trends (a share price, a subsidy growing year on year) reaches levels in the forecast
period that it never had in training, and a tree model of the level cannot predict beyond the levels it saw. The
change over the horizon stays within the range it had: learning it, and adding it to the value a horizon back (the
naive forecast, a feature of every forecast with the target's past), follows the series wherever it goes, and a
model that learns no change at all is the naive forecast itself. Like ``LogTarget`` it fits the regressor it is given
in place, so a service's own references to it stay valid.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin


class PastChange(RegressorMixin, BaseEstimator):
    """``regressor`` fitted on y - X[column]; predictions are X[column] plus its predictions. ``timeless`` are
    features the change is not learnt from: the time as a trend, since a change that grows with the date would be
    extrapolated into every forecast (the level a horizon back already carries where the series has got to)."""

    def __init__(self, regressor: Any, column: str, timeless: tuple[str, ...] = ()):
        self.regressor = regressor
        self.column = column
        self.timeless = timeless

    def fit(self, X, y, **fit_params) -> PastChange:
        change = np.asarray(y, dtype=float) - X[self.column].to_numpy(dtype=float)
        self.regressor.fit(self._inputs(X), change, **fit_params)
        self.feature_names_in_ = np.asarray(list(X.columns), dtype=object)
        return self

    def predict(self, X) -> np.ndarray:
        return X[self.column].to_numpy(dtype=float) + self.regressor.predict(self._inputs(X))

    def _inputs(self, X):
        return X.drop(columns=[c for c in self.timeless if c in X.columns])

    @property
    def regressor_(self) -> Any:
        """The fitted regressor, named as scikit-learn's target transformers name it (explainers unwrap it)."""
        return self.regressor
