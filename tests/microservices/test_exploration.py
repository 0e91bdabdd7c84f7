"""The exploratory analysis on tables whose structure is known: it finds the planted correlation, the planted
outliers with their rows, and ranks what goes with a focus column across numeric and categorical columns."""

import json

import numpy as np
import pandas as pd
import pytest

from dagsmith import datasets
from dagsmith_kit import Bundle


def exploration_of(out: Bundle) -> dict:
    return json.loads((out.path / "exploration.json").read_text(encoding="utf-8"))


def staff(rows: int = 800) -> pd.DataFrame:
    """Weekly hours follow overtime pay and the role, not the shoe size; two salaries are typed with extra zeros;
    most staff have one car."""
    rng = np.random.default_rng(3)
    role = rng.choice(["engineer", "nurse", "clerk"], rows)
    overtime = rng.uniform(0, 20, rows)
    by_role = np.select([role == "nurse", role == "engineer"], [6.0, 2.0], 0.0)
    hours = 35 + 0.8 * overtime + by_role + rng.normal(0, 1.5, rows)
    salary = rng.normal(50_000, 8_000, rows)
    salary[[17, 402]] = [5_100_000, 4_700_000]
    frame = pd.DataFrame({"role": role, "overtime_pay": overtime, "shoe_size": rng.normal(42, 2, rows),
                          "salary": salary, "weekly_hours": hours})
    frame.loc[rng.choice(rows, 40, replace=False), "shoe_size"] = np.nan
    frame["cars"] = np.where(rng.random(rows) < 0.7, 1, rng.integers(0, 4, rows))  # most have one: no outliers
    return frame


def test_correlations_and_outliers_are_both_found(run, tmp_path):
    bundle = Bundle.create(tmp_path / "staff", staff())
    out = run("exploratory_analysis", bundle, {"analyses": ["statistics", "correlations", "outliers"]}).output
    found = exploration_of(out)
    assert set(found) >= {"statistics", "correlations", "outliers"} and "distributions" not in found
    metrics = out.metrics()
    assert metrics["stat.salary.mean"] == pytest.approx(staff()["salary"].mean())
    assert metrics["stat.salary.count"] == 800
    assert "stat.role.mean" not in metrics  # figures per numeric column, as the evaluators read them
    strongest = found["correlations"][0]
    assert {strongest["a"], strongest["b"]} == {"overtime_pay", "weekly_hours"} and strongest["value"] > 0.8
    assert "cars" not in {c["column"] for c in found["outliers"]}  # its quartiles meet: no fences to be outside
    salary = next(c for c in found["outliers"] if c["column"] == "salary")
    assert metrics["outliers.salary.iqr"] == salary["count"] >= 2
    assert sorted(row for row, _ in salary["extremes"][:2]) == [18, 403]  # counted from 1
    report = (out.path / "report.md").read_text(encoding="utf-8")
    assert "## Outliers per column" in report and "5,100,000 (row 18)" in report
    assert "## Spearman correlations" in report and (out.path / "artifacts" / "correlation_spearman.png").is_file()


def test_what_goes_with_a_focus_column_is_ranked_across_types(run, tmp_path):
    bundle = Bundle.create(tmp_path / "staff", staff())
    out = run("exploratory_analysis", bundle, {"analyses": ["missingness"], "focus": "weekly_hours"}).output
    found = exploration_of(out)
    ranked = [a["column"] for a in found["associations"]]
    assert ranked[:2] == ["overtime_pay", "role"] and "weekly_hours" not in ranked
    by_column = {a["column"]: a for a in found["associations"]}
    assert by_column["shoe_size"]["strength"] < 0.15 and by_column["overtime_pay"]["measure"] == "Spearman |rho|"
    assert by_column["role"]["direction"].startswith("weekly_hours is highest where role is 'nurse'")
    assert found["missingness"]["columns"] == {"shoe_size": 0.05}
    assert (out.path / "artifacts" / "associations.png").is_file()
    assert "Association is not cause" in (out.path / "report.md").read_text(encoding="utf-8")


def test_copies_of_the_focus_are_named_as_such_and_left_out_of_the_answer(run, tmp_path):
    """Daily hours are weekly hours over five and a grade letter renames the role: each goes with its original
    completely, which says nothing of what drives it; the answer names them as copies and ranks the rest."""
    from dagsmith.execution.answer import StepOutcome, summarise
    from dagsmith.models.catalog import Stage, TaskType

    frame = staff().assign(daily_hours=lambda f: f["weekly_hours"] / 5,
                           grade=lambda f: f["role"].map({"engineer": "E", "nurse": "N", "clerk": "C"}))
    bundle = Bundle.create(tmp_path / "staff", frame)
    for focus, copy, first in [("weekly_hours", "daily_hours", "overtime_pay"), ("role", "grade", "weekly_hours")]:
        out = run("exploratory_analysis", bundle, {"analyses": ["statistics"], "focus": focus}).output
        by_column = {a["column"]: a for a in exploration_of(out)["associations"]}
        assert by_column[copy]["same"] and f"{focus} itself" in by_column[copy]["direction"], by_column[copy]
        assert not by_column[first]["same"]
        answer = summarise(TaskType.EXPLORATORY_ANALYSIS, None,
                           [StepOutcome(0, Stage.EDA, "exploratory_analysis", out.path)], None, None)
        assert (f"What goes most with {focus} ({copy}, {focus} itself in other units or names, left aside): {first} ("
                in answer), answer


def test_a_categorical_focus_is_ranked_with_class_rates(run, tmp_path):
    bundle = Bundle.create(tmp_path / "churn", datasets.load("wa_churn"))
    found = exploration_of(run("exploratory_analysis", bundle, {"analyses": [], "focus": "churn"}).output)
    by_column = {a["column"]: a for a in found["associations"]}
    assert found["associations"][0]["column"] in {"contract", "tenure"}
    assert by_column["contract"]["measure"] == "Cramér's V"
    assert by_column["contract"]["direction"].startswith("churn is 'Yes' most often when contract is 'Month-to-month'")
    assert by_column["tenure"]["direction"].startswith("tenure is highest where churn is 'No'")


def test_unknown_analyses_and_focus_are_refused(run, tmp_path):
    bundle = Bundle.create(tmp_path / "staff", staff())
    assert "unknown analyses clustering" in run("exploratory_analysis", bundle, {"analyses": ["clustering"]},
                                                 ok=False).stderr
    assert "no column 'pay'" in run("exploratory_analysis", bundle, {"focus": "pay"}, ok=False).stderr
