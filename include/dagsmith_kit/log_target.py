"""A regressor that learns the logarithm of a positive target and predicts on the target's own scale.

Quantities that grow by ratios (prices, incomes, sales that grow a few percent a year, counts) have errors that
grow with their size; a model of their logarithm fits the ratios and extrapolates a growth as a growth. The
model search tries it beside the raw target when the target is positive and spans a wide range, and keeps it
only when it validates better.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from dagsmith_kit.target_transform import TargetTransform

#: A target is worth modelling on the log scale when it is positive and its largest value is this many times
#: its smallest, or its distribution is this skewed to the right.
WIDE_RATIO, RIGHT_SKEW = 4.0, 1.0


def suits_log(y: pd.Series) -> bool:
    """Whether the target is positive and wide or right-skewed enough for a log model to be worth a try."""
    values = pd.to_numeric(y, errors="coerce")
    if values.isna().any() or not (values > 0).all():
        return False
    return bool(values.max() / values.min() >= WIDE_RATIO or values.skew() >= RIGHT_SKEW)


class LogTarget(TargetTransform):
    """``regressor`` fitted on log(y); predictions are exp of its predictions."""

    def __init__(self, regressor: Any):
        self.regressor = regressor

    def _learnt(self, y: np.ndarray, X) -> np.ndarray:
        return np.log(y)

    def _restored(self, predicted: np.ndarray, X) -> np.ndarray:
        return np.exp(np.clip(predicted, -700, 700))
