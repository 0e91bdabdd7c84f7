"""Failure injection for the self-healing protocol: real failures of real services, provoked on purpose.

One step per chosen run (its main step: the model, clusterer, detector, reducer or profiler) fails the way a
service meets data it cannot handle: its input gets a high-cardinality text column (type mismatch), loses the
column the service needs (missing column), gains infinities (numerical instability), or the service gets a
one-second budget on a busy machine (resource exhaustion). The fault follows the first-chosen service, as a
service/data mismatch would: a substitute gets the clean input, a plain retry meets the same fault again,
except for the resource fault, which only hits the first try (a busy moment passes).

The run is a real Airflow run in its own process (``airflow.local``), so the fault travels in its environment
(``variables``) and wraps the runtime each step task makes there (``runtime.WRAPPER_VARIABLE``); the tries it
met are counted in its scratch folder, which outlives each task.
"""

from __future__ import annotations

import dataclasses
import json
import os
from enum import StrEnum
from pathlib import Path

import numpy as np
from sqlalchemy import select

from dagsmith.config import Settings
from dagsmith.models.catalog import Stage
from dagsmith.runtime import WRAPPER_VARIABLE
from dagsmith.runtime.base import Invocation, InvocationResult, Runtime
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from dagsmith_kit import Bundle

#: Every fifth run gets a fault (20%, as the protocol says), the kinds taking turns.
EVERY = 5
#: The fault a run's steps meet, as JSON: service, fault and scratch folder (``variables``).
FAULT_VARIABLE = "DAGSMITH_BENCH_FAULT"
MAIN_STAGES = (Stage.MODELLING, Stage.CLUSTERING, Stage.ANOMALY_DETECTION, Stage.DIMENSIONALITY_REDUCTION, Stage.EDA)


class Fault(StrEnum):
    TYPE_SHAPE = "type_shape_mismatch"
    MISSING_COLUMN = "missing_parameter_or_column"
    NUMERICAL = "numerical_instability"
    RESOURCE = "resource_exhaustion"


def fault_for(index: int) -> Fault | None:
    """The fault injected into the ``index``-th task of the suite, if any (deterministic across runs)."""
    if index % EVERY != EVERY // 2:
        return None
    return list(Fault)[(index // EVERY) % len(Fault)]


def main_step(steps: list[tuple[Stage, str]]) -> tuple[Stage, str] | None:
    """The (stage, service) the fault goes into: the first main stage the pipeline has."""
    for wanted in MAIN_STAGES:
        for stage, service in steps:
            if stage == wanted:
                return stage, service
    return None


def single_model(settings: Settings, pipeline_id: int) -> None:
    """Turn the pipeline's model search into one model: the experiment measures how a failing step is repaired
    (healing against plain retries), and a search absorbs a failed candidate by design whichever the mode."""
    with session_scope(settings) as session:
        for step in session.scalars(select(schema.PipelineStep).where(schema.PipelineStep.pipeline_id == pipeline_id)):
            step.search = {}


def variables(service: str, fault: Fault, scratch: Path) -> dict[str, str]:
    """The environment of a run whose invocations of ``service`` meet ``fault``."""
    return {WRAPPER_VARIABLE: f"{__name__}:{injecting.__name__}",
            FAULT_VARIABLE: json.dumps({"service": service, "fault": fault.value, "scratch": str(scratch)})}


def injecting(runtime: Runtime) -> FaultInjectingRuntime:
    """``runtime`` with the fault this process's environment names (``variables``)."""
    given = json.loads(os.environ[FAULT_VARIABLE])
    return FaultInjectingRuntime(runtime, given["service"], Fault(given["fault"]), Path(given["scratch"]))


class FaultInjectingRuntime:
    """Wraps a runtime; invocations of ``service`` meet ``fault`` (see the module docstring)."""

    def __init__(self, inner: Runtime, service: str, fault: Fault, scratch: Path):
        self.inner, self.service, self.fault, self.scratch = inner, service, fault, scratch
        self.name = inner.name

    def run(self, invocation: Invocation) -> InvocationResult:
        if invocation.service != self.service:
            return self.inner.run(invocation)
        attempt = self._next_try()
        if self.fault is Fault.RESOURCE:
            if attempt > 1:
                return self.inner.run(invocation)
            tight = dataclasses.replace(invocation.limits, timeout_seconds=1)
            return self.inner.run(dataclasses.replace(invocation, limits=tight))
        corrupted = self._corrupt(Bundle.open(invocation.input_dir), self.scratch / f"input-{attempt}")
        return self.inner.run(dataclasses.replace(invocation, input_dir=corrupted.path))

    def _next_try(self) -> int:
        """This try's number among the service's tries in the run: each task try makes its runtime anew."""
        self.scratch.mkdir(parents=True, exist_ok=True)
        attempt = sum(1 for _ in self.scratch.glob("try-*")) + 1
        (self.scratch / f"try-{attempt}").touch()
        return attempt

    def _corrupt(self, bundle: Bundle, destination: Path) -> Bundle:
        copy = bundle.copy_into(destination)
        rng = np.random.default_rng(0)
        for name, frame in copy.tables().items():
            numeric = copy.feature_columns(frame, numeric=True)
            if self.fault is Fault.TYPE_SHAPE:
                frame["injected_code"] = [f"c{value:08x}" for value in rng.integers(0, 2**32, len(frame))]
            elif self.fault is Fault.NUMERICAL and numeric:
                frame[numeric[0]] = frame[numeric[0]].astype(float)
                frame.loc[frame.index[: max(1, len(frame) // 20)], numeric[0]] = np.inf
            elif self.fault is Fault.MISSING_COLUMN:
                frame = frame.drop(columns=[copy.target] if copy.target in frame.columns else numeric)
            copy.write_table(name, frame)
        return copy
