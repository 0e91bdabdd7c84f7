"""The shape the kit's target transforms share: a regressor fitted on the target made into something easier to learn
(its logarithm, its change over a forecast's horizon), whose predictions are turned back to the target's own scale.

Unlike scikit-learn's ``TransformedTargetRegressor`` the regressor given is fitted in place, so a service's own
references to it (its coefficients, its importances) stay valid; explainers reach it as ``regressor_``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin


class TargetTransform(RegressorMixin, BaseEstimator):
    """A subclass says how the target is learnt (``_learnt``), how a prediction is turned back (``_restored``) and
    which of the features the regressor reads (``_inputs``, all of them unless it says otherwise)."""

    regressor: Any

    def fit(self, X, y, **fit_params) -> TargetTransform:
        self.regressor.fit(self._inputs(X), self._learnt(np.asarray(y, dtype=float), X), **fit_params)
        if hasattr(X, "columns"):
            self.feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)
        return self

    def predict(self, X) -> np.ndarray:
        return self._restored(np.asarray(self.regressor.predict(self._inputs(X)), dtype=float), X)

    def _learnt(self, y: np.ndarray, X) -> np.ndarray:
        raise NotImplementedError

    def _restored(self, predicted: np.ndarray, X) -> np.ndarray:
        raise NotImplementedError

    def _inputs(self, X):
        return X

    @property
    def regressor_(self) -> Any:
        """The fitted regressor, named as scikit-learn's target transformers name it (explainers unwrap it)."""
        return self.regressor
