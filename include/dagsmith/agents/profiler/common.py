"""What every part of the profile shares: the words of a column's name, dtype tests, shares and values as text."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from dagsmith.models.profile import SemanticType

#: Categorical columns with more levels are left out of Cramér's V and the correlation ratio (both inflate).
MAX_LEVELS = 50
S = SemanticType


def tokens(name: str) -> list[str]:
    """Lower-case words of a column name: 'MonthlyIncome', 'monthly_income' and 'Monthly income' agree."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", name)
    return re.findall(r"[a-z0-9]+", spaced.lower())


def is_numeric(series: pd.Series) -> bool:
    return ptypes.is_numeric_dtype(series) and not ptypes.is_bool_dtype(series)


def is_text(series: pd.Series) -> bool:
    return ptypes.is_object_dtype(series) or ptypes.is_string_dtype(series)


def finite(value: Any) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def ratio(part: float, whole: float) -> float:
    return part / whole if whole else 0.0


#: Columns that get the costly per-column work (the plausibility suite of great-expectations, the association with
#: the target); wider tables get it on their first columns, and the profile says so. Without a bound, a table of
#: 10,000 columns took many minutes.
MAX_DETAILED_COLUMNS = 500


def show(value: Any) -> str:
    number = isinstance(value, (int, float, np.number)) and not isinstance(value, (bool, np.bool_))
    return f"{value:.4g}" if number else repr(str(value))


def percent(share: float) -> str:
    """Shares as people read them: 37%, 2.4%, <0.1%."""
    if 0 < share < 0.001:
        return "<0.1%"
    return f"{share:.0%}" if share >= 0.1 or share == 0 else f"{share:.1%}"


def integral(series: pd.Series) -> bool:
    return bool((series.dropna() % 1 == 0).all())
