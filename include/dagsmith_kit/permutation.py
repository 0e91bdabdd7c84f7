"""Permutation importance with the model called once per batch of shuffled copies, not once per shuffle.

scikit-learn's ``permutation_importance`` calls the model on the held-out rows once per feature and repeat: for a
fitted pipeline that is dozens of calls, each paying the pipeline's fixed cost (a column transformer, the model's
own set-up) on a few thousand rows, and those calls were most of an explanation step's time. Here every shuffled
copy is stacked into one frame and predicted in as few calls as memory allows; each copy is then scored by the
same scikit-learn scorer on its slice of the answers. The shuffles are scikit-learn's own (the same seeds, the same
order), so the importances are the ones ``permutation_importance`` reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state

from dagsmith_kit.frames import with_columns

#: Most cells (rows times columns) predicted in one call: shuffled copies are stacked up to this many. Cells, not
#: rows: a model's own encoding widens each row (a linear model's one-hot columns, up to 30 a column), and 200,000
#: rows of a table 80 columns wide, so widened, outgrew a step's 2 GB.
MAX_BATCH_CELLS = 1_000_000
#: How a scorer may ask a model for its answers.
RESPONSE_METHODS = frozenset({"predict", "predict_proba", "decision_function", "predict_log_proba"})


@dataclass(frozen=True)
class Importances:
    """The score with every feature intact, and per feature the mean and spread of its drop over the repeats."""

    baseline: float
    means: np.ndarray
    spreads: np.ndarray


class _Answers:
    """Stands in for the model while scoring: the scorer asks it for the answers on a slice of the stacked copies
    (``X`` is that slice), and it hands back the model's answers, computed once per response method for the whole
    stack. Everything else (``classes_``, scikit-learn's tags) is the model's."""

    def __init__(self, model: Any, stack: pd.DataFrame) -> None:
        self._model, self._stack, self._computed = model, stack, {}

    def __getattr__(self, name: str) -> Any:
        if name in RESPONSE_METHODS and hasattr(self._model, name):
            def answer(part: slice) -> np.ndarray:
                return self._answers(name)[part]
            answer.__name__ = name  # scikit-learn names the method it called by it
            return answer
        return getattr(self._model, name)

    def _answers(self, method: str) -> np.ndarray:
        if method not in self._computed:
            self._computed[method] = np.asarray(getattr(self._model, method)(self._stack))
        return self._computed[method]


def _shuffled_columns(column: pd.Series, seed: int, n_repeats: int) -> list[np.ndarray]:
    """The column's values after each repeat, shuffled as scikit-learn shuffles them: one generator per feature from
    the same seed, the index array shuffled in place every repeat and applied to the already shuffled column."""
    random_state = check_random_state(seed)
    order = np.arange(len(column))
    values, shuffled = column.to_numpy(), []
    for _ in range(n_repeats):
        random_state.shuffle(order)
        values = values[order]
        shuffled.append(values)
    return shuffled


def permutation_importance(model: Any, rows: pd.DataFrame, y: pd.Series, scorer: Any, *, n_repeats: int,
                           random_state: int, baseline: float | None = None) -> Importances:
    """How much ``scorer`` (a scikit-learn scorer) drops when each column of ``rows`` is shuffled, ``n_repeats``
    times per column: scikit-learn's ``permutation_importance``, with the shuffled copies predicted in batches.
    ``baseline`` is the score of the intact rows when the caller has it already."""
    baseline = float(scorer(model, rows, y)) if baseline is None else baseline
    seed = check_random_state(random_state).randint(np.iinfo(np.int32).max + 1)
    copies = [(feature, values) for feature in rows.columns
              for values in _shuffled_columns(rows[feature], seed, n_repeats)]
    per_batch = max(1, MAX_BATCH_CELLS // max(rows.size, 1))
    scores: list[float] = []
    for start in range(0, len(copies), per_batch):
        batch = copies[start:start + per_batch]
        stack = pd.concat([with_columns(rows, {feature: values}) for feature, values in batch], ignore_index=True)
        answers = _Answers(model, stack)
        scores += [float(scorer(answers, slice(i * len(rows), (i + 1) * len(rows)), y)) for i in range(len(batch))]
    drops = baseline - np.array(scores).reshape(len(rows.columns), n_repeats)
    return Importances(baseline, drops.mean(axis=1), drops.std(axis=1))
