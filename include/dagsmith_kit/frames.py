"""Table operations that hold for any column name a user's data may have."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd


def with_columns(frame: pd.DataFrame, columns: Mapping[str, Any]) -> pd.DataFrame:
    """``frame`` with ``columns`` set (added or replaced), leaving ``frame`` as it was: ``DataFrame.assign`` takes the
    names as keywords, so a column named ``self`` (a flag for the self-employed) collides with its own argument."""
    out = frame.copy(deep=False)
    for name, values in columns.items():
        out[name] = values
    return out
