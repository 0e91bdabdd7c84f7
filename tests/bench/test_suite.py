"""The benchmark task suite on the real datasets: its size and mix, every task's columns, samples and ground truth,
and reference pipelines that name real microservices within the limits their code enforces."""

from __future__ import annotations

import functools
import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import yaml
from pydantic import ValidationError

from dagsmith import datasets
from dagsmith.bench.suite import BenchTask, load_suite
from dagsmith.models.catalog import Stage, TaskType

CATALOG = Path(__file__).resolve().parents[2] / "microservices"
SUITE = load_suite()
TASKS = {task.id: task for task in SUITE}
#: The suite's intended mix (BENCHMARK.md), with some slack so tasks can be added.
MIX = {
    TaskType.BINARY_CLASSIFICATION: (22, 32),
    TaskType.MULTICLASS_CLASSIFICATION: (13, 20),
    TaskType.REGRESSION: (22, 32),
    TaskType.CLUSTERING: (10, 15),
    TaskType.DIMENSIONALITY_REDUCTION: (6, 10),
    TaskType.ANOMALY_DETECTION: (6, 10),
    TaskType.EXPLORATORY_ANALYSIS: (8, 13),
}
#: Row limits the services' code enforces (svm/svr count training rows: 80% after the default split).
ROW_LIMITS = {"svm_classifier": 12_500, "svr_regressor": 12_500, "agglomerative_clustering": 10_000,
              "tsne_embedding": 5_000}
#: The stage every task type cannot do without.
CORE_STAGE = {
    TaskType.BINARY_CLASSIFICATION: Stage.MODELLING,
    TaskType.MULTICLASS_CLASSIFICATION: Stage.MODELLING,
    TaskType.REGRESSION: Stage.MODELLING,
    TaskType.CLUSTERING: Stage.CLUSTERING,
    TaskType.DIMENSIONALITY_REDUCTION: Stage.DIMENSIONALITY_REDUCTION,
    TaskType.ANOMALY_DETECTION: Stage.ANOMALY_DETECTION,
    TaskType.EXPLORATORY_ANALYSIS: Stage.EDA,
}


_loaded = functools.cache(datasets.load)


@pytest.fixture(scope="module", autouse=True)
def load_each_dataset_once():
    """Every dataset is read once per test process; tasks get copies."""
    patch = pytest.MonkeyPatch()
    patch.setattr(datasets, "load", lambda name: _loaded(name).copy())
    yield
    patch.undo()


@functools.cache
def frame(task_id: str) -> pd.DataFrame:
    return TASKS[task_id].frame()


def test_the_suite_has_over_a_hundred_tasks_in_the_benchmark_mix():
    counts = Counter(task.task_type for task in SUITE)
    assert len(SUITE) >= 100
    for task_type, (low, high) in MIX.items():
        assert low <= counts[task_type] <= high, f"{counts[task_type]} {task_type.value} tasks"


def test_ids_are_unique_and_goals_are_not_repeated():
    assert len(TASKS) == len(SUITE)
    assert len({task.goal.lower() for task in SUITE}) == len(SUITE)


def test_goals_are_held_out_from_the_intent_detectors_labelled_goals():
    labelled = yaml.safe_load((Path(__file__).resolve().parents[1] / "data" / "intents.yaml").read_text())
    assert not {entry["goal"].strip().lower() for entry in labelled} & {task.goal.strip().lower() for task in SUITE}


def test_sizes_span_hundreds_to_hundreds_of_thousands_of_rows():
    sizes = [len(frame(task.id)) for task in SUITE]
    assert sum(300 <= n <= 20_000 for n in sizes) >= 0.75 * len(sizes)
    assert 3 <= sum(n >= 50_000 for n in sizes) <= 10
    assert max(sizes) >= 200_000


@pytest.mark.parametrize("name", sorted(datasets.DATASETS))
def test_every_registered_dataset_loads_with_the_shape_its_description_gives(name):
    table = _loaded(name)
    rows, columns = re.match(r"([\d,]+) .*? x (\d+):", datasets.DATASETS[name].description).groups()
    assert table.shape == (int(rows.replace(",", "")), int(columns))


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_task_columns_exist_and_the_frame_is_what_the_pipeline_should_see(task_id):
    task, data = TASKS[task_id], frame(task_id)
    raw = _loaded(task.dataset)
    named = [*task.drop, *(c for c in (task.target, task.labels) if c)]
    assert set(named) <= set(raw.columns), f"missing columns: {set(named) - set(raw.columns)}"
    assert not set(task.drop) & set(data.columns)
    assert task.labels is None or task.labels not in data.columns
    assert task.target is None or task.target in data.columns
    assert len(data) == task.rows if task.rows else (len(data) == len(raw) or task.anomaly_share)
    assert task.rows is None or task.rows < len(raw)
    assert data.shape[1] >= 2


@pytest.mark.parametrize("task_id", sorted(t.id for t in SUITE if t.task_type.supervised))
def test_supervised_targets_fit_their_task(task_id):
    task = TASKS[task_id]
    target = frame(task_id)[task.target]
    classes = target.dropna().nunique()
    if task.task_type is TaskType.BINARY_CLASSIFICATION:
        assert classes == 2
    elif task.task_type is TaskType.MULTICLASS_CLASSIFICATION:
        assert classes >= 3
    else:
        assert pd.api.types.is_numeric_dtype(target) and classes > 10


@pytest.mark.parametrize("task_id", sorted(t.id for t in SUITE if t.labels))
def test_ground_truth_lines_up_with_the_frame(task_id):
    task = TASKS[task_id]
    truth, data = task.ground_truth(), frame(task_id)
    assert truth.index.equals(data.index)
    assert truth.notna().all() and truth.nunique() >= 2
    if task.task_type is TaskType.ANOMALY_DETECTION:
        assert truth.nunique() == 2 and truth.value_counts(normalize=True).min() < 0.5
    assert TASKS[task_id].ground_truth().equals(truth), "sampling must be deterministic"


def test_unlabelled_tasks_have_no_ground_truth():
    assert all(task.ground_truth() is None for task in SUITE if not task.labels)


def test_samples_are_seeded_and_keep_the_class_mix():
    task = TASKS["diamond-cut-grade"]
    sample = frame(task.id)
    assert sample.equals(task.frame())
    full = _loaded(task.dataset)[task.target].value_counts(normalize=True)
    share = sample[task.target].value_counts(normalize=True)
    assert (share - full).abs().max() < 0.002


def test_every_referenced_microservice_exists():
    named = {service for task in SUITE for services in task.reference.values() for service in services}
    missing = sorted(s for s in named if not (CATALOG / s / "main.py").is_file())
    assert not missing, f"not in microservices/: {missing}"


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_reference_pipeline_fits_the_task_and_the_services_limits(task_id):
    task = TASKS[task_id]
    n = len(frame(task_id))
    assert CORE_STAGE[task.task_type] in task.reference
    assert task.reference.get(Stage.LOADING, [None])[0] == "tabular_loader"
    if task.task_type.supervised:
        assert {Stage.SPLITTING, Stage.EVALUATION} <= set(task.reference)
        evaluator = "classification_evaluator" if task.task_type.classification else "regression_evaluator"
        assert evaluator in task.reference[Stage.EVALUATION]
        if frame(task_id)[task.target].isna().any():  # imputers never fill the target; target_validator stops
            assert task.reference[Stage.IMPUTATION] == ["missing_row_dropper"]
            assert "target_validator" not in task.reference[Stage.VALIDATION]
    else:
        assert Stage.SPLITTING not in task.reference, "unsupervised services refuse split bundles"
    for services in task.reference.values():
        too_big = [s for s in services if n > ROW_LIMITS.get(s, n)]
        assert not too_big, f"{too_big} refuse {n} rows"
    if task.labels:
        assert "missing_row_dropper" not in task.reference.get(Stage.IMPUTATION, []), "rows must stay aligned"


def test_anomaly_tasks_built_from_labelled_tables_make_their_anomalies_rare():
    task = TASKS["biopsy-unusual-samples"]
    truth = task.ground_truth().astype(str)
    full = _loaded(task.dataset)[task.labels].astype(str).value_counts()
    assert truth.value_counts()[full.idxmax()] == full.max()  # every ordinary row kept
    assert truth.value_counts(normalize=True)[full.idxmin()] == pytest.approx(task.anomaly_share, abs=0.002)


def test_invalid_suites_are_rejected(tmp_path):
    entry = {"id": "a-task", "dataset": "iris", "goal": "group the flowers", "task_type": "clustering",
             "reference": {"clustering": ["kmeans_clustering"]}, "metrics": ["silhouette"]}
    assert BenchTask.model_validate(entry).target is None
    bad = [
        ({**entry, "task_type": "forecasting"}, "task_type"),
        ({**entry, "reference": {"modeling": ["kmeans_clustering"]}}, "reference.modeling"),
        ({**entry, "dataset": "no_such_data"}, "unknown dataset 'no_such_data'"),
        ({**entry, "id": "Not Kebab"}, "String should match pattern"),
        ({**entry, "metrics": ["rmse"]}, r"metrics \['rmse'\] do not apply to clustering"),
        ({**entry, "metrics": ["adjusted_rand"]}, "metrics against ground truth need a labels column"),
        ({**entry, "task_type": "regression"}, "supervised tasks need a target"),
        ({**entry, "labels": "species", "drop": ["species"]}, "the target and the labels cannot also be dropped"),
        ({**entry, "labels": "species", "anomaly_share": 0.03}, "anomaly_share applies to anomaly detection"),
    ]
    for wrong, why in bad:
        with pytest.raises(ValidationError, match=why):
            BenchTask.model_validate(wrong)
    path = tmp_path / "tasks.yaml"
    path.write_text(f"- {entry}\n- {entry}\n")
    with pytest.raises(ValueError, match="duplicate task id 'a-task'"):
        load_suite(path)
