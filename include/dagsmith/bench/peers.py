"""The AutoML a user would otherwise reach for, on the same supervised tasks, in the same run: the peers.

Every peer gets the task's data with the same hold-out the product's default splitter makes (20%, seed 42,
stratified for classification) and a time budget equal to the product's own time to results on that task, and its
predictions are scored by the same functions (:mod:`dagsmith.execution.quality`). A peer only fits and predicts
(``Peer.fit_predict``); splitting, timing, scoring and failures are this module's, the same for all of them.
"""

from __future__ import annotations

import logging
import time
from typing import Protocol

import pandas as pd
from pydantic import BaseModel, Field
from sklearn.model_selection import train_test_split

from dagsmith.bench.suite import BenchTask
from dagsmith.errors import ServiceUnavailable
from dagsmith.execution.quality import classification_quality, regression_quality

#: The AutoML peers the supervised tasks also go through, in the order the report shows them.
PEERS = ("flaml", "autogluon")
TEST_SIZE, SPLIT_SEED = 0.2, 42
MIN_BUDGET_SECONDS = 10


class PeerResult(BaseModel):
    task: str
    peer: str = "flaml"
    budget_seconds: float
    seconds: float
    success: bool
    failure: str | None = None
    quality: dict[str, float] = Field(default_factory=dict)


class PeerUnavailable(ServiceUnavailable):
    """A peer cannot run on this machine (its environment cannot be built); the other peers still run."""


class Peer(Protocol):
    name: str

    def prepare(self) -> None:
        """Make the peer ready to fit (once per benchmark run); raises PeerUnavailable when it cannot be."""

    def fit_predict(self, x_train: pd.DataFrame, y_train: pd.Series, x_test: pd.DataFrame, classification: bool,
                    budget_seconds: int) -> tuple[pd.Series, pd.DataFrame | None]:
        """Fit on the training rows within the budget; the predictions for ``x_test`` and, for classification, the
        class probabilities with one column per class label (``y_train`` holds labels as text for classification,
        numbers for regression)."""
        ...


def features(frame: pd.DataFrame) -> pd.DataFrame:
    """Text columns as pandas categoricals, which both peers' learners take natively."""
    return frame.apply(lambda column: column.astype("category") if column.dtype == object or
                       pd.api.types.is_string_dtype(column) else column)


def split(task: BenchTask) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The training and held-out rows of a task, as the product's default splitter makes them."""
    frame = task.frame().dropna(subset=[task.target])
    strata = frame[task.target].astype(str) if task.task_type.classification else None
    return train_test_split(frame, test_size=TEST_SIZE, random_state=SPLIT_SEED, stratify=strata)


def run_peer(peer: Peer, task: BenchTask, budget_seconds: float) -> PeerResult:
    """Train ``peer`` on the task's training rows for ``budget_seconds`` and score it on the held-out rows."""
    assert task.target is not None
    train, test = split(task)
    classification = task.task_type.classification
    y_train = train[task.target].astype(str if classification else float)
    budget = max(MIN_BUDGET_SECONDS, round(budget_seconds))
    started = time.perf_counter()
    try:
        predicted, proba = peer.fit_predict(features(train.drop(columns=[task.target])), y_train,
                                            features(test.drop(columns=[task.target])), classification, budget)
        predicted.index = test.index
        if classification:
            proba = proba.set_axis(test.index).rename(columns=str) if proba is not None else None
            quality = classification_quality(test[task.target], predicted, proba, y_train)
        else:
            quality = regression_quality(test[task.target].astype(float), predicted, y_train)
    except Exception as exc:  # noqa: BLE001 - a peer's failure is a result, not a crash of the benchmark
        logging.getLogger(__name__).warning("%s failed on %s: %s", peer.name, task.id, exc)
        return PeerResult(task=task.id, peer=peer.name, budget_seconds=budget,
                          seconds=round(time.perf_counter() - started, 3), success=False,
                          failure=f"{type(exc).__name__}: {exc}")
    return PeerResult(task=task.id, peer=peer.name, budget_seconds=budget,
                      seconds=round(time.perf_counter() - started, 3), success=quality.valid, failure=quality.problem,
                      quality=quality.metrics)


class Flaml:
    """FLAML's AutoML in the benchmark's own process (``flaml[automl]`` is one of dagsmith's dependencies)."""

    name = "flaml"

    def prepare(self) -> None:
        """Nothing to build: FLAML is installed with dagsmith."""

    def fit_predict(self, x_train: pd.DataFrame, y_train: pd.Series, x_test: pd.DataFrame, classification: bool,
                    budget_seconds: int) -> tuple[pd.Series, pd.DataFrame | None]:
        from flaml import AutoML

        automl = AutoML()
        automl.fit(X_train=x_train, y_train=y_train,
                   task="classification" if classification else "regression", time_budget=budget_seconds,
                   n_jobs=1, verbose=0, seed=SPLIT_SEED)
        predicted = pd.Series(automl.predict(x_test))
        if not classification:
            return predicted, None
        return predicted, pd.DataFrame(automl.predict_proba(x_test), columns=[str(c) for c in automl.classes_])
