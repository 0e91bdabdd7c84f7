"""What a person states in the goal is honoured or refused, never dropped: requested models, columns ruled in or
out; and words inside a model's name never decide the task."""

from __future__ import annotations

import pytest

from dagsmith.agents.planner import plan
from dagsmith.models.catalog import TaskType
from dagsmith.models.intent import IssueLevel
from tests.agents.test_intent import intent


def constraints(found) -> dict:
    return {c.kind: c.value for c in found.constraints}


@pytest.mark.parametrize("ref, goal, task, model", [
    ("breast_cancer", "predict whether a tumour is malignant with a logistic regression on standardised features",
     TaskType.BINARY_CLASSIFICATION, ["logistic regression"]),
    ("wa_churn", "use a random forest to predict churn", TaskType.BINARY_CLASSIFICATION, ["random forest"]),
    ("diabetes", "fit a random forest regressor for disease progression", TaskType.REGRESSION, ["random forest"]),
    ("wa_churn", "churn model, a linear model I can explain to management", TaskType.BINARY_CLASSIFICATION,
     ["linear model"]),
    ("diabetes", "predict progression with lightgbm or xgboost", TaskType.REGRESSION, ["LightGBM", "XGBoost"]),
])
def test_a_requested_model_is_a_constraint_and_its_name_does_not_set_the_task(ref, goal, task, model):
    found = intent(ref, goal)
    assert found.task_type is task
    assert constraints(found)["model"] == model
    assert found.reasons["constraint.model"].startswith("the goal asks for '")


def test_a_refused_model_is_excluded_not_requested():
    found = intent("wa_churn", "predict churn, no neural nets or boosting please")
    assert "model" not in constraints(found)
    assert {c.value for c in found.constraints if c.kind == "exclude_family"} == {"neural_network", "gradient_boosting"}


@pytest.mark.parametrize("goal, kind, columns", [
    ("predict churn without the tenure column", "exclude_columns", ["tenure"]),
    ("predict churn, ignore total charges and monthly charges", "exclude_columns", ["total_charges", "monthly_charges"]),
    ("predict churn but don't use the contract", "exclude_columns", ["contract"]),
    ("churn model, drop tenure and contract", "exclude_columns", ["tenure", "contract"]),
    ("predict churn using only tenure and contract", "only_columns", ["tenure", "contract"]),
])
def test_columns_ruled_in_or_out_are_constraints(goal, kind, columns):
    found = intent("wa_churn", goal)
    assert found.target == "churn" and not found.errors
    assert constraints(found)[kind] == columns


def test_words_after_without_that_name_no_column_are_no_exclusion():
    assert "exclude_columns" not in constraints(intent("wa_churn", "predict churn without overfitting"))


def test_rows_with_no_value_are_no_exclusion_of_that_column():
    found = intent("wa_churn", "predict churn from tenure; rows with no total charges can be dropped")
    assert "exclude_columns" not in constraints(found)
    assert constraints(intent("wa_churn", "predict churn, no total charges"))["exclude_columns"] == ["total_charges"]


@pytest.mark.parametrize("goal", ["fit a model using tenure and contract to predict churn",
                                  "based on tenure and monthly charges, predict churn",
                                  "from tenure, contract and gender, estimate whether they churn"])
def test_a_task_word_after_the_inputs_names_the_target(goal):
    found = intent("wa_churn", goal)
    assert (found.task_type, found.target) == (TaskType.BINARY_CLASSIFICATION, "churn")


def test_an_unknown_or_target_column_ruled_out_is_refused_with_the_columns_there_are():
    unknown = intent("wa_churn", "predict churn without the colour column")
    assert [i.code for i in unknown.errors] == ["column_missing"]
    assert "There is no column 'colour'" in unknown.errors[0].message and "tenure" in unknown.errors[0].message
    target = intent("wa_churn", "predict churn but ignore churn")
    assert "target_excluded" in {i.code for i in target.issues if i.level is IssueLevel.ERROR}


def test_a_model_the_catalog_lacks_is_refused_naming_the_closest(catalog_settings, embedder, tmp_path):
    from dagsmith import datasets
    from dagsmith.agents.builder import ChoiceError

    path = tmp_path / "churn.csv"
    datasets.load("wa_churn").head(400).to_csv(path, index=False)
    with pytest.raises(ChoiceError, match=r"the goal asks for CatBoost, but no model of that kind in the catalog "
                                          r"fits binary classification; the closest are \w+"):
        plan(path, "predict churn with a catboost model", settings=catalog_settings, embedder=embedder, save=False)
    planned = plan(path, "use a random forest to predict churn", settings=catalog_settings, embedder=embedder,
                   save=False).pipeline
    modelling = next(s for s in planned.steps if s.stage == "modelling")
    assert modelling.search.candidates == ["random_forest_classifier"]
    assert modelling.search.reason.startswith("the goal asks for random forest: ")
