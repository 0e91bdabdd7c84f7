"""How the intent's reasons and issues write numbers and lists: shares, counts, a few names, a column's values."""

from __future__ import annotations

from dagsmith.models.profile import ColumnProfile


def percent(ratio: float) -> str:
    """A share as a reason writes it: 37%, 0.5% (one decimal below 1%), <0.1%."""
    return "<0.1%" if 0 < ratio < 0.001 else f"{ratio:.1%}" if ratio < 0.01 else f"{ratio:.0%}"


def counted(n: int, noun: str) -> str:
    """'1 row', '3 rows'."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def shortlist(names: list[str], limit: int = 4) -> str:
    """The first few names, with ', ...' when there are more."""
    return ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")


def class_list(column: ColumnProfile, limit: int = 4) -> str:
    """A column's most common values, with ', ...' when it holds more."""
    values = [v.value for v in column.top_values[:limit]]
    return ", ".join(values) + (", ..." if column.unique > limit else "")


def stray(column: ColumnProfile) -> str:
    """What becomes of the words in a column of numbers (they are read as missing); nothing when there are none."""
    if not column.not_numbers:
        return ""
    return f" ({counted(column.not_numbers, 'value')} in it are not numbers and are read as missing)"
