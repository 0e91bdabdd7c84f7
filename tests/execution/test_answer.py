"""The answer's paragraph for groups found: in the table's own units, and doubted when the groups barely separate
(``quality.clustering_quality``, recomputed from the step's table and labels, not taken from the service)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dagsmith.execution.answer import StepOutcome, summarise
from dagsmith.execution.quality import SUBSTANTIAL_SILHOUETTE, clustering_quality
from dagsmith.models.catalog import Stage, TaskType
from dagsmith_kit import Bundle
from dagsmith_kit.insight import readable_number


def _clustered(tmp_path, table: pd.DataFrame, labels: np.ndarray) -> list[StepOutcome]:
    """A loaded table, then the same rows standardised and clustered by ``labels`` (the service's claimed
    silhouette is high whatever they are: the run's judgement must not take it on trust)."""
    loaded = Bundle.create(tmp_path / "00", table)
    scaled = Bundle.create(tmp_path / "01", (table - table.mean()) / table.std(ddof=0))
    scaled.write_predictions(pd.DataFrame({"cluster": labels}))
    scaled.write_metrics({"silhouette": 0.9})
    return [StepOutcome(0, Stage.LOADING, "tabular_loader", loaded.path),
            StepOutcome(1, Stage.CLUSTERING, "kmeans_clustering", scaled.path)]


def _ages_and_incomes(rows: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame({"age": rng.integers(20, 70, rows).astype(float), "income": rng.normal(50_000, 9_000, rows)})


def test_groups_are_described_in_the_table_s_own_units(tmp_path):
    table = _ages_and_incomes()
    older = table["age"] > 45
    table.loc[older, "income"] += 60_000  # two groups far apart on both columns
    steps = _clustered(tmp_path, table, older.astype(int).to_numpy())
    quality = clustering_quality(steps[1].bundle())
    assert quality is not None and quality.review is None and quality.metrics["silhouette"] > 0.5
    answer = summarise(TaskType.CLUSTERING, None, steps, quality, None)
    expected = table.loc[older, "age"].mean()
    assert f"higher age ({readable_number(expected)} against {readable_number(table['age'].mean())} overall)" in answer
    assert answer.startswith("Found 2 groups") and "e-1" not in answer


@pytest.mark.parametrize("split", ["random", "one column"])
def test_groups_that_barely_separate_need_review(tmp_path, split):
    """Rows labelled at random, or a cloud of six unrelated measurements cut in two along one of them, form no
    groups."""
    rng = np.random.default_rng(2)
    table = pd.DataFrame(rng.normal(size=(300, 6)), columns=[f"m{i}" for i in range(6)])
    labels = rng.integers(0, 3, len(table)) if split == "random" else (table["m0"] > 0).astype(int).to_numpy()
    steps = _clustered(tmp_path, table, labels)
    quality = clustering_quality(steps[1].bundle())
    assert quality is not None and quality.valid and quality.metrics["silhouette"] <= SUBSTANTIAL_SILHOUETTE
    answer = summarise(TaskType.CLUSTERING, None, steps, quality, None)
    found = len(set(labels.tolist()))
    assert answer.startswith(f"Needs review: the {found} groups barely separate (silhouette "), answer


def test_one_group_for_every_row_needs_review(tmp_path):
    steps = _clustered(tmp_path, _ages_and_incomes(), np.zeros(300, dtype=int))
    quality = clustering_quality(steps[1].bundle())
    assert quality is not None and quality.review.startswith("every row fell into one group")


def test_a_one_hot_encoded_category_is_described_by_its_value(tmp_path):
    """Groups set apart by a plan that an encoder turned into indicator columns read "more plan = premium", once
    per group, never by an indicator's name."""
    rng = np.random.default_rng(3)
    premium = rng.random(300) < 0.3
    table = pd.DataFrame({"spend": np.where(premium, 900.0, 100.0) + rng.normal(0, 20, 300),
                          "plan_basic": (~premium).astype(float), "plan_premium": premium.astype(float)})
    steps = _clustered(tmp_path, table, premium.astype(int))
    quality = clustering_quality(steps[1].bundle())
    assert quality.review is None, "the plans spend differently: the groups say more than the plan"
    answer = summarise(TaskType.CLUSTERING, None, steps, quality, None)
    assert f"more plan = premium (100% against {premium.mean():.0%} overall)" in answer, answer
    assert "plan_" not in answer and answer.count("plan = ") == 2, answer


def test_groups_that_are_one_yes_no_columns_values_need_review(tmp_path):
    """Residents grouped into women and men, who entered, left and stayed alike: standardised, the sex's indicator
    columns stand apart from every measurement, so k-means finds the sexes, well separated (silhouette above 0.25),
    and nothing else. Groups set apart by a plan that also spend differently are an answer (above)."""
    rng = np.random.default_rng(4)
    female = rng.random(400) < 0.78
    table = pd.DataFrame({"sex_Female": female.astype(float), "sex_Male": (~female).astype(float),
                          "entry": rng.normal(900, 60, 400), "exit": rng.normal(1000, 60, 400),
                          "time": rng.normal(100, 40, 400)})
    steps = _clustered(tmp_path, table, female.astype(int))
    quality = clustering_quality(steps[1].bundle())
    assert quality.metrics["silhouette"] > SUBSTANTIAL_SILHOUETTE
    assert quality.review.startswith("the groups are the values of `sex` and barely differ in anything else")
    assert summarise(TaskType.CLUSTERING, None, steps, quality, None).startswith("Needs review: the groups are")


def test_components_are_named_by_the_features_they_move_with(tmp_path):
    """A size component (height and weight together) and a second one (age): the answer names each by the loaded
    features most correlated with it, whatever the reduction's own report holds."""
    rng = np.random.default_rng(4)
    size, age = rng.normal(size=400), rng.normal(size=400)
    table = pd.DataFrame({"height": 170 + 10 * size + rng.normal(0, 2, 400), "weight": 70 + 12 * size,
                          "age": 40 + 12 * age, "noise": rng.normal(size=400)})
    loaded = Bundle.create(tmp_path / "00", table)
    reduced = Bundle.create(tmp_path / "01", pd.DataFrame({"component_1": size, "component_2": -age}))
    reduced.write_metrics({"n_input_features": 4, "n_components": 2, "explained_variance_ratio": 0.8,
                           "explained_variance_ratio_1": 0.5, "explained_variance_ratio_2": 0.3})
    steps = [StepOutcome(0, Stage.LOADING, "tabular_loader", loaded.path),
             StepOutcome(1, Stage.DIMENSIONALITY_REDUCTION, "pca_reducer", reduced.path)]
    answer = summarise(TaskType.DIMENSIONALITY_REDUCTION, None, steps, None, None)
    assert answer.startswith("Reduced 4 numeric features to 2 components that keep 80.0% of the variance: "
                             "component_1 (50%) moves with weight (+1.00), height (+0.98), "), answer
    assert "component_2 (30%) moves with age (-1.00), " in answer


@pytest.mark.parametrize("dropped", [0, 3])
def test_unusual_rows_are_counted_from_one_and_renumbering_is_said(tmp_path, dropped):
    """Without an id column the most unusual rows are named by number, counted from 1 as a person counts a file's
    rows; after a step dropped rows the numbers are among those left, and the answer says so."""
    table = _ages_and_incomes(20)
    loaded = Bundle.create(tmp_path / "00", table)
    kept = table.iloc[dropped:].reset_index(drop=True)
    detected = Bundle.create(tmp_path / "01", kept)
    flags = np.zeros(len(kept), dtype=bool)
    flags[4] = True
    detected.write_predictions(pd.DataFrame({"anomaly_score": flags.astype(float), "is_anomaly": flags,
                                             "anomaly_rank": np.where(flags, 1, 2), "why": np.where(flags, "odd", "")}))
    steps = [StepOutcome(0, Stage.LOADING, "tabular_loader", loaded.path),
             StepOutcome(1, Stage.ANOMALY_DETECTION, "isolation_forest_detector", detected.path)]
    answer = summarise(TaskType.ANOMALY_DETECTION, None, steps, None, None)
    said = " (rows numbered among the 17 left of the 20 loaded)" if dropped else ""
    assert answer.endswith(f"The most unusual{said}: row 5 (odd)."), answer
