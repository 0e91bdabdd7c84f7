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
    """``regressor`` fitted on y - X[column]; predictions are X[column] plus its predictions."""

    def __init__(self, regressor: Any, column: str):
        self.regressor = regressor
        self.column = column

    def fit(self, X, y, **fit_params) -> PastChange:
        self.regressor.fit(X, np.asarray(y, dtype=float) - X[self.column].to_numpy(dtype=float), **fit_params)
        if hasattr(self.regressor, "feature_names_in_"):
            self.feature_names_in_ = self.regressor.feature_names_in_
        return self

    def predict(self, X) -> np.ndarray:
        return X[self.column].to_numpy(dtype=float) + self.regressor.predict(X)

    @property
    def regressor_(self) -> Any:
        """The fitted regressor, named as scikit-learn's target transformers name it (explainers unwrap it)."""
        return self.regressor
