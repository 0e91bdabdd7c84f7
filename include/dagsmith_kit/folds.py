"""The folds a model is validated on within its training rows, kept apart the way the held-out split kept them.

A split that held out whole groups (a patient's visits, a store's weeks: ``Bundle.group_column``) is only honoured if
every fold inside the training rows does the same: random folds would validate on the groups a model learnt from and
favour whatever remembers them, which the test set does not reward. The model search, cross-validation, cross-fitted
target encoding and the leak check all take their folds from here, so none of them forgets the groups.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.model_selection import (
    GroupKFold,
    GroupShuffleSplit,
    KFold,
    ShuffleSplit,
    StratifiedGroupKFold,
    StratifiedKFold,
    StratifiedShuffleSplit,
    TimeSeriesSplit,
)

from dagsmith_kit.bundle import Bundle

#: Above this many training rows one 80/20 split replaces k-fold cross-validation in the model search.
HOLDOUT_ROWS = 20_000

Folds = list[tuple[np.ndarray, np.ndarray]]


def groups_of(inp: Bundle, table: pd.DataFrame) -> pd.Series | None:
    """The group of each row when the split kept groups apart (``Bundle.group_column``), else None."""
    column = inp.group_column
    return table[column].reset_index(drop=True) if column and column in table.columns else None


def cross_folds(y: pd.Series, folds: int, seed: int, *, classification: bool,
                groups: pd.Series | None = None) -> tuple[Folds, str]:
    """Up to ``folds`` shuffled folds of the rows and how they were made: each group's rows in one fold when
    ``groups`` are given, stratified by class when every class can fill each fold (fewer folds when the rows, the
    groups or the smallest class are fewer)."""
    x = np.zeros(len(y))
    if groups is not None and groups.nunique() >= 2:
        folds = min(folds, groups.nunique())
        stratified = classification and int(y.value_counts().min()) >= folds
        splitter = (StratifiedGroupKFold if stratified else GroupKFold)(n_splits=folds, shuffle=True, random_state=seed)
        return list(splitter.split(x, y, groups)), \
            f"{folds}-fold cross-validation on the training rows, each group's rows in one fold"
    folds = min(folds, len(y))
    smallest = int(y.value_counts().min()) if classification else 0
    if smallest >= 2:
        folds = min(folds, smallest)
        splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    else:
        splitter = KFold(n_splits=folds, shuffle=True, random_state=seed)
    return list(splitter.split(x, y)), f"{folds}-fold cross-validation on the training rows"


def validation_splits(y: pd.Series, classification: bool, folds: int, seed: int,
                      order: pd.Series | None = None, groups: pd.Series | None = None) -> tuple[Folds, str]:
    """The folds every configuration of a model search is scored on (the same ones for every candidate of a
    pipeline): with the rows' times as ``order``, folds that learn from earlier times and validate on later ones;
    on a large table one 80/20 split; else ``cross_folds``."""
    if order is not None:
        return _time_splits(order, folds)
    if len(y) <= HOLDOUT_ROWS:
        return cross_folds(y, folds, seed, classification=classification, groups=groups)
    x = np.zeros(len(y))
    if groups is not None and groups.nunique() >= 2:
        splitter = GroupShuffleSplit(n_splits=1, test_size=0.2, random_state=seed)
        return list(splitter.split(x, y, groups)), "one 80/20 split of the training rows' groups"
    stratified = classification and int(y.value_counts().min()) >= 2
    splitter = (StratifiedShuffleSplit if stratified else ShuffleSplit)(n_splits=1, test_size=0.2, random_state=seed)
    return list(splitter.split(x, y)), "one 80/20 split of the training rows"


def _time_splits(order: pd.Series, folds: int) -> tuple[Folds, str]:
    """Expanding-window folds over the rows sorted by time (positions into the unsorted rows): random folds
    would let a forecast learn from the future it is validated on and flatter models that only interpolate."""
    by_time = np.argsort(order.to_numpy(), kind="stable")
    if len(order) > HOLDOUT_ROWS:
        cut = int(len(order) * 0.8)
        return [(by_time[:cut], by_time[cut:])], "the latest 20% of the training rows, after the rest"
    folds = max(2, min(folds, len(order) // 2 - 1))
    splits = TimeSeriesSplit(n_splits=folds).split(by_time)
    return [(by_time[fit], by_time[score]) for fit, score in splits], \
        f"{folds} folds in time order (each validated on times after those it learned from)"
