"""The peer a user would otherwise reach for: FLAML's AutoML on the same supervised tasks, in the same run.

FLAML gets the task's data with the same hold-out the product's default splitter makes (20%, seed 42,
stratified for classification) and a time budget equal to the product's own time to results on that task,
and its predictions are scored by the same functions (:mod:`dagsmith.bench.quality`).
"""

from __future__ import annotations

import logging
import time

import pandas as pd
from pydantic import BaseModel, Field
from sklearn.model_selection import train_test_split

from dagsmith.execution.quality import classification_quality, regression_quality
from dagsmith.bench.suite import BenchTask

PEER = "flaml"
TEST_SIZE, SPLIT_SEED = 0.2, 42
MIN_BUDGET_SECONDS = 10


class PeerResult(BaseModel):
    task: str
    peer: str = PEER
    budget_seconds: float
    seconds: float
    success: bool
    failure: str | None = None
    quality: dict[str, float] = Field(default_factory=dict)


def _features(frame: pd.DataFrame) -> pd.DataFrame:
    """Text columns as pandas categoricals, which FLAML's learners take natively."""
    return frame.apply(lambda column: column.astype("category") if column.dtype == object or
                       pd.api.types.is_string_dtype(column) else column)


def run_peer(task: BenchTask, budget_seconds: float) -> PeerResult:
    """Train FLAML on the task's training rows for ``budget_seconds`` and score it on the held-out rows."""
    from flaml import AutoML

    frame = task.frame().dropna(subset=[task.target])
    classification = task.task_type.classification
    strata = frame[task.target].astype(str) if classification else None
    train, test = train_test_split(frame, test_size=TEST_SIZE, random_state=SPLIT_SEED, stratify=strata)
    budget = max(MIN_BUDGET_SECONDS, round(budget_seconds))
    automl = AutoML()
    started = time.perf_counter()
    try:
        automl.fit(X_train=_features(train.drop(columns=[task.target])),
                   y_train=train[task.target].astype(str) if classification else train[task.target].astype(float),
                   task="classification" if classification else "regression", time_budget=budget,
                   n_jobs=1, verbose=0, seed=SPLIT_SEED)
        features = _features(test.drop(columns=[task.target]))
        predicted = pd.Series(automl.predict(features), index=test.index)
        if classification:
            proba = pd.DataFrame(automl.predict_proba(features), columns=[str(c) for c in automl.classes_],
                                 index=test.index)
            quality = classification_quality(test[task.target], predicted, proba, train[task.target])
        else:
            quality = regression_quality(test[task.target].astype(float), predicted, train[task.target].astype(float))
    except Exception as exc:  # noqa: BLE001 - a peer's failure is a result, not a crash of the benchmark
        logging.getLogger(__name__).warning("FLAML failed on %s: %s", task.id, exc)
        return PeerResult(task=task.id, budget_seconds=budget, seconds=round(time.perf_counter() - started, 3),
                          success=False, failure=f"{type(exc).__name__}: {exc}")
    return PeerResult(task=task.id, budget_seconds=budget, seconds=round(time.perf_counter() - started, 3),
                      success=quality.valid, failure=quality.problem, quality=quality.metrics)
