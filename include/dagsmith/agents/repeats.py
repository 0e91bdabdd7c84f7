"""Repeated rows and whether chance explains them: the evidence the deduplication decision reads.

Rows coincide by chance where the data crowds (a table of a few categories, a plan price every new customer pays),
and there other rows differ from them in a single column. A record entered twice is as alone as the table's other
rows. So the repeats are compared with the table: how many of them no other row differs from in a single column,
against the same share among the rows that do not repeat. Counting the cardinalities' product instead misreads
columns that depend on each other (a first month's total charge is its monthly charge).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dagsmith.models.profile import DatasetProfile, RepeatedRows, SemanticType

#: An identifier at least this unique names one record per row, so a repeated value is a record entered twice;
#: a less unique one names an entity with several rows (a customer's orders).
RECORD_ID_UNIQUE = 0.9
#: An entity has at most this many rows on average (a patient's visits, a player's seasons), and a table at least this
#: many entities, so that a fifth of them make a test set; an identifier shared by more rows, or by fewer values, is a
#: code for a category (a store, a species), which a model may learn from.
MAX_ROWS_PER_ENTITY, MIN_ENTITIES = 100, 20


def repeated_ids(profile: DatasetProfile) -> dict[str, int]:
    """Record identifiers that repeat, with how many rows repeat an earlier value."""
    return {c.name: c.count - c.unique for c in profile.columns
            if c.semantic_type is SemanticType.ID and c.unique_ratio >= RECORD_ID_UNIQUE and c.count > c.unique}


def entity_column(profile: DatasetProfile, target: str | None) -> tuple[str, float] | None:
    """The identifier that names an entity with several rows (a patient's visits, a farm's years), with its rows per
    entity: of several, the finest. Rows of one entity on both sides of a random split let a model be tested on what it
    has already seen of that entity. One with gaps is not used: a row without its entity has no side to go to."""
    entities = [c for c in profile.columns if c.semantic_type is SemanticType.ID and c.name != target and not c.missing
                and c.unique_ratio < RECORD_ID_UNIQUE and c.unique >= MIN_ENTITIES
                and c.count <= MAX_ROWS_PER_ENTITY * c.unique]
    finest = max(entities, key=lambda c: c.unique, default=None)
    return (finest.name, finest.count / finest.unique) if finest else None


def repeated_rows(frame: pd.DataFrame, identifiers: list[str]) -> RepeatedRows | None:
    """Repeats over every column but ``identifiers`` (a fresh row number makes a copy look new), or None."""
    columns = [name for name in frame.columns if name not in set(identifiers)]
    if not columns or len(frame) < 2:
        return None
    cells = np.column_stack([pd.util.hash_pandas_object(frame[name], index=False).to_numpy() for name in columns])
    weights = np.random.default_rng(0).integers(1, 2**63, size=len(columns), dtype=np.uint64) | np.uint64(1)
    with np.errstate(over="ignore"):
        terms = cells * weights  # a row's hash is the sum of its cells' terms; dropping a column subtracts one
        rows = pd.Series(terms.sum(axis=1, dtype=np.uint64))
        same = rows.map(rows.value_counts()).to_numpy()
        neighbours = np.zeros(len(frame), dtype=np.int64)
        for j in range(len(columns)):
            rest = pd.Series(rows.to_numpy() - terms[:, j])
            neighbours += rest.map(rest.value_counts()).to_numpy() - same
    repeated = rows.duplicated().to_numpy()
    if not repeated.any():
        return None
    alone, single = neighbours == 0, same == 1
    return RepeatedRows(checked_rows=len(frame), rows=int(repeated.sum()), isolated=int((repeated & alone).sum()),
                        isolated_share=round(float((alone & single).sum() / max(single.sum(), 1)), 4))
