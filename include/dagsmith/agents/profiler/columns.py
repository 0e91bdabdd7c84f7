"""One column's statistics: counts, distinct and top values, moments of numbers (text numbers coerced, their stray
words counted), the range of dates, and the issues a person should see."""

from __future__ import annotations

from typing import Any

import pandas as pd

from dagsmith.agents.profiler.common import S, finite, is_numeric, is_text, percent, ratio
from dagsmith.agents.profiler.semantic import as_dates
from dagsmith.models.profile import ColumnProfile, SemanticType, ValueCount


def column_profile(series: pd.Series, semantic: SemanticType) -> ColumnProfile:
    counts = series.value_counts()
    counts = counts[counts > 0]  # categorical dtypes list unused categories
    count, rows = int(series.count()), len(series)
    column = ColumnProfile(
        name=str(series.name), dtype=str(series.dtype), semantic_type=semantic, count=count,
        missing=rows - count, missing_ratio=ratio(rows - count, rows), unique=len(counts),
        unique_ratio=ratio(len(counts), count),
        top_values=[ValueCount(value=str(value), count=int(n)) for value, n in counts.head(5).items()],
        **_summary(series, semantic),
    )
    column.issues = _column_issues(column)
    return column


def _summary(series: pd.Series, semantic: SemanticType) -> dict[str, Any]:
    """Mean, std, min and max of numbers (numeric text coerced); the range of dates as ISO strings."""
    if is_numeric(series) or (semantic is S.NUMERIC and is_text(series) and series.count()):
        numbers = series if is_numeric(series) else pd.to_numeric(series, errors="coerce")
        stray = int(numbers.isna().sum() - series.isna().sum())
        moments = {key: finite(getattr(numbers, key)()) for key in ("mean", "std", "min", "max")}
        return {"not_numbers": stray, **moments}
    if semantic is S.DATETIME:
        dates = as_dates(series).dropna()
        return {"min": dates.min().isoformat(), "max": dates.max().isoformat()} if len(dates) else {}
    return {}


def _column_issues(column: ColumnProfile) -> list[str]:
    if column.count == 0:
        return ["all missing"]
    issues = ["constant"] if column.unique == 1 else []
    if column.missing_ratio > 0.5:
        issues.append(f"mostly missing ({percent(column.missing_ratio)})")
    return issues
