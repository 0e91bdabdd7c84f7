"""Which columns one-hot encode a category, read from the table itself, so that what a step says about a row or a
group is put in the table's own terms ("type = Condo", not "type_Condo = 1").

An encoder leaves no record of what it made, and a service may have run any encoder, so the columns are recognised by
what one-hot encoding always gives: 0/1 columns named ``{column}_{value}``, at least two sharing the column's name,
at most one of them set in any row.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class Indicator:
    """A 0/1 column standing for one value of a categorical column."""

    column: str  # the category's column, as loaded
    value: str


def indicators(frame: pd.DataFrame, columns: list[str]) -> dict[str, Indicator]:
    """The ``columns`` of ``frame`` that one-hot encode a category, each with the column and value it stands for."""
    binary = [c for c in columns if "_" in c and frame[c].dropna().isin((0, 1)).all()]
    prefixes: dict[str, list[str]] = {}
    for name in binary:
        for at, char in enumerate(name):
            if char == "_" and 0 < at < len(name) - 1:
                prefixes.setdefault(name[:at], []).append(name)
    found: dict[str, Indicator] = {}
    for prefix in sorted(prefixes, key=len, reverse=True):  # "type_Multi_Family": "type", not "type_Multi"
        members = [c for c in prefixes[prefix] if c not in found]
        if len(members) >= 2 and frame[members].fillna(0).astype(float).sum(axis=1).le(1).all():
            found.update({c: Indicator(prefix, c[len(prefix) + 1:]) for c in members})
    return found


def shown_as(column: str, groups: dict[str, Indicator]) -> str:
    """How a person reads a feature: ``type = Condo`` for an indicator, else its name."""
    found = groups.get(column)
    return f"{found.column} = {found.value}" if found else column
