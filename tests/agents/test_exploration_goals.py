"""Exploratory goals read for what they ask: the analyses they name, and the column they relate the others to."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dagsmith.agents.intent import detect_intent
from dagsmith.agents.profiler import profile_frame
from dagsmith.models.catalog import TaskType
from tests.agents.test_intent import intent


def constraints(found) -> dict:
    return {c.kind: c.value for c in found.constraints}


@pytest.fixture(scope="module")
def staff():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"role": rng.choice(["engineer", "nurse"], 300), "overtime_pay": rng.uniform(0, 20, 300),
                          "weekly_hours": rng.normal(38, 4, 300), "age": rng.integers(20, 65, 300)})
    return profile_frame(frame, source="staff")


def test_outliers_listed_among_analyses_are_one_more_analysis():
    found = intent("attrition", "show distributions, correlations and outliers of the employee data")
    assert found.task_type is TaskType.EXPLORATORY_ANALYSIS and found.target is None
    assert constraints(found)["analyses"] == ["distributions", "correlations", "outliers"]
    assert "'outliers'" in found.reasons["constraint.analyses"]


def test_outliers_alone_are_rows_to_flag():
    assert intent("attrition", "find the employees that are outliers").task_type is TaskType.ANOMALY_DETECTION


@pytest.mark.parametrize("goal", ["what drives weekly hours?", "Which factors influence the weekly hours worked",
                                  "what is associated with weekly_hours", "explore what affects hours per week"])
def test_what_drives_a_column_relates_the_others_to_it(staff, goal):
    found = detect_intent(goal, staff)
    assert found.task_type is TaskType.EXPLORATORY_ANALYSIS and found.target is None
    assert constraints(found)["focus"] == "weekly_hours"
    assert "analyses" not in constraints(found)


def test_a_run_together_column_name_is_the_focus():
    found = intent("attrition", "what drives monthly income?")
    assert constraints(found)["focus"] == "MonthlyIncome"
    assert found.reasons["constraint.focus"].startswith("the goal asks what goes with MonthlyIncome")


def test_an_exploration_naming_nothing_in_particular_has_no_focus_and_runs_everything(staff):
    found = detect_intent("explore the data and describe it", staff)
    assert found.task_type is TaskType.EXPLORATORY_ANALYSIS and not found.constraints
