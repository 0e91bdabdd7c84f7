"""The deterministic reasoner reads real failures of real microservices into the classes healing acts on."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagsmith import datasets
from dagsmith.catalog.source import ServiceSource
from dagsmith.healing.classify import ErrorClass, diagnose
from dagsmith.runtime.base import Invocation, Limits
from dagsmith.runtime.local import LocalRuntime
from dagsmith_kit import Bundle
from tests.conftest import CATALOG, ROOT

HOSTILE = ROOT / "tests" / "data" / "hostile"


def _split(tmp_path: Path, frame, target: str, task: str) -> Bundle:
    bundle = Bundle.create(tmp_path / "in", target=target, task_type=task)
    cut = int(len(frame) * 0.75)
    bundle.write_table("train", frame.iloc[:cut])
    bundle.write_table("test", frame.iloc[cut:])
    return bundle


def _fail(tmp_path: Path, folder: Path, bundle: Bundle, limits: Limits | None = None, params: dict | None = None):
    runtime = LocalRuntime()
    result = runtime.run(Invocation(folder.name, ServiceSource.read(folder).files, bundle.path, tmp_path / "out",
                                    params or {}, limits or Limits()))
    assert not result.ok, "the service was expected to fail"
    return diagnose(result)


def test_text_features_in_a_numeric_model_are_a_type_mismatch(tmp_path):
    churn = datasets.load("wa_churn").head(400).dropna()
    bundle = _split(tmp_path, churn, "churn", "binary_classification")
    diagnosis = _fail(tmp_path, CATALOG / "random_forest_classifier", bundle)
    assert diagnosis.error_class is ErrorClass.TYPE_SHAPE, diagnosis


def test_gaps_refused_by_a_strict_scaler_are_missing_values(tmp_path):
    bundle = _split(tmp_path, datasets.load("penguins"), "species", "multiclass_classification")
    diagnosis = _fail(tmp_path, CATALOG / "standard_scaler_strict", bundle)
    assert diagnosis.error_class is ErrorClass.MISSING_VALUES, diagnosis


def test_an_evaluator_without_predictions_lacks_an_input(tmp_path):
    bundle = _split(tmp_path, datasets.load("breast_cancer"), "diagnosis", "binary_classification")
    diagnosis = _fail(tmp_path, CATALOG / "classification_evaluator", bundle)
    assert diagnosis.error_class is ErrorClass.MISSING_INPUT, diagnosis


def _script(tmp_path: Path, name: str, code: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "main.py").write_text(code)
    (folder / "requirements.txt").write_text("numpy==2.4.6\n")
    return folder


def test_a_singular_matrix_is_numerical_instability(tmp_path):
    folder = _script(tmp_path, "whitening", "import numpy as np\nnp.linalg.inv(np.zeros((3, 3)))\n")
    bundle = Bundle.create(tmp_path / "in", datasets.load("iris"), task_type="clustering")
    assert _fail(tmp_path, folder, bundle).error_class is ErrorClass.NUMERICAL


@pytest.mark.parametrize("service, limits", [
    ("sleeper", Limits(timeout_seconds=3)),
    ("memory_hog", Limits(memory_mb=300)),
])
def test_timeouts_and_memory_exhaustion_are_resource_errors(tmp_path, service, limits):
    bundle = Bundle.create(tmp_path / "in", datasets.load("iris"), task_type="clustering")
    diagnosis = _fail(tmp_path, HOSTILE / service, bundle, limits)
    assert diagnosis.error_class is ErrorClass.RESOURCE, diagnosis


def test_a_missing_module_is_an_environment_error(tmp_path):
    folder = _script(tmp_path, "needs_missing_module", "import a_module_nobody_installed\n")
    bundle = Bundle.create(tmp_path / "in", datasets.load("iris"), task_type="clustering")
    assert _fail(tmp_path, folder, bundle).error_class is ErrorClass.ENVIRONMENT
