"""Integer columns that number entities with several rows each (a patient's visits, a brood's chicks, a class's
pupils), told by what depends on them rather than by their name.

A column named `Subject` or `BROOD` holding 1 to 223 is typed a number by its values alone, so a model learnt from
it as an amount ("raising Subject from 39 to 97 lowers conc") and the rows of one patient fell on both sides of the
split. What gives such a column away is the rest of the row: each patient has one height, one race, one drinking
habit, whatever their visit; a measurement has no columns of its own. A column is read as an entity number when at
least ``MIN_ATTRIBUTES`` other columns take a single value within each of its repeated values, and none of them
merely bins it (an age and its age groups: each group a run of consecutive ages). Of two columns that determine each
other (a store's number and its floor area), the one numbered more densely is the number; the other stays a
measurement.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dagsmith.agents.profiler.common import integral, is_numeric
from dagsmith.agents.repeats import MAX_ROWS_PER_ENTITY, MIN_ENTITIES
from dagsmith.models.profile import ColumnProfile, SemanticType

#: Columns of the entity's own (besides the number) that say it is one: a single one may depend on a measurement by
#: chance or by construction (an hour and whether it is night).
MIN_ATTRIBUTES = 2
#: The least share of the rows that must belong to a value seen more than once: entities with several rows each.
MIN_REPEATED_SHARE = 0.5
#: The least share of the repeated values within which an attribute holds a single value (one typo aside).
MIN_CONSTANT_SHARE = 0.99
#: An attribute whose commonest value fills more of the rows is constant within groups by chance alone.
MAX_COMMONEST_SHARE = 0.9
#: Values of a candidate whose rows are read first: a column that varies within them is no attribute of it.
PROBE_ENTITIES = 200


def entity_numbers(sample: pd.DataFrame, columns: list[ColumnProfile]) -> dict[str, list[str]]:
    """The integer columns of ``sample`` that number entities, each with the columns that are its entity's own."""
    candidates = [c.name for c in columns if c.semantic_type in {SemanticType.NUMERIC, SemanticType.CATEGORICAL}
                  and not c.missing and c.unique >= MIN_ENTITIES and c.count <= MAX_ROWS_PER_ENTITY * c.unique]
    varied = [name for name in sample.columns if _varies(sample[name])]
    found = {}
    for key in candidates:
        values = sample[key]
        if not is_numeric(values) or not integral(values):
            continue
        counts = values.value_counts()
        repeated = counts.index[counts >= 2]
        rows = sample[values.isin(repeated)]
        if len(rows) < MIN_REPEATED_SHARE * len(sample):
            continue
        attributes = _attributes(rows, key, [name for name in varied if name != key])
        if len(attributes) >= MIN_ATTRIBUTES:
            found[key] = attributes
    return {key: attributes for key, attributes in found.items()
            if not any(key in found.get(other, ()) and _density(sample[other]) > _density(sample[key])
                       for other in attributes)}


def _density(values: pd.Series) -> float:
    """The share of the integers between the lowest and highest value that occur: 1.0 for a numbering 1 to N."""
    return values.nunique() / (values.max() - values.min() + 1)


def _varies(series: pd.Series) -> bool:
    shares = series.value_counts(normalize=True, dropna=False)
    return len(shares) >= 2 and shares.iloc[0] <= MAX_COMMONEST_SHARE


def _attributes(rows: pd.DataFrame, key: str, others: list[str]) -> list[str]:
    """The ``others`` that take one value within (nearly) every value of ``key`` without being a binning of it: tried
    first on the rows of ``PROBE_ENTITIES`` of its values, so that a table of many integer columns reads in seconds."""
    probe = rows[rows[key].isin(rows[key].drop_duplicates().head(PROBE_ENTITIES))]
    probed = _single_valued(probe, key, others)
    possible = [name for name in others if probed[name]]
    if len(possible) < MIN_ATTRIBUTES:
        return []
    single = _single_valued(rows, key, possible)
    firsts = rows.groupby(key, sort=True)[possible].first()
    return [name for name in possible if single[name] and not _bins(firsts[name])]


def _single_valued(rows: pd.DataFrame, key: str, names: list[str]) -> pd.Series:
    """For each of ``names``, whether it holds one value within at least ``MIN_CONSTANT_SHARE`` of ``key``'s values."""
    ordered = rows.sort_values(key, kind="stable")
    keys = ordered[key].to_numpy()
    values = ordered[names]
    before = values.shift()
    changed = values.ne(before) & ~(values.isna() & before.isna())  # a value differing from the row before it
    changed = changed & np.r_[False, keys[1:] == keys[:-1]][:, None]  # within one value of the key
    return changed.groupby(keys).any().mean() <= 1 - MIN_CONSTANT_SHARE


def _bins(per_key: pd.Series) -> bool:
    """Whether an attribute's value per key (in the key's order) only bins or rescales the key: each of its values
    one run of consecutive keys (an age and its age groups), or, one to one, rising or falling with it."""
    if per_key.is_unique:  # one to one: another name for the entity, unless it is the number rescaled
        return is_numeric(per_key) and (per_key.is_monotonic_increasing or per_key.is_monotonic_decreasing)
    return int((per_key != per_key.shift()).sum()) <= per_key.nunique(dropna=False)
