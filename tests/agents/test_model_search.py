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
from dagsmith.models.intent import Constraint, Intent, IntentIssue, IssueLevel
from dagsmith.models.plan import Candidate, Signals, StageRecommendation
from dagsmith.models.profile import DatasetProfile


def ranking(*entries: tuple[str, float, float]) -> StageRecommendation:
    """Candidates as (name, score, compatibility), best-ranked first."""
    return StageRecommendation(stage=Stage.MODELLING, query="", considered=len(entries), candidates=[
        Candidate(microservice=name, score=score, reason="", signals=Signals(keyword=0, semantic=0, pattern=0,
                                                                             compatibility=fit))
        for name, score, fit in entries])


def intent(task: TaskType = TaskType.BINARY_CLASSIFICATION, *constraints: Constraint) -> Intent:
    return Intent(goal="predict churn", task_type=task, target="churn", required_stages=[Stage.MODELLING],
                  constraints=list(constraints), confidence=0.9)


def profile(rows: int, columns: int) -> DatasetProfile:
    return DatasetProfile.model_construct(n_rows=rows, columns=[None] * columns)


RANKED = ranking(("adaboost_classifier", 0.59, 0.85), ("svm_classifier", 0.57, 0.85),
                 ("decision_tree_classifier", 0.56, 0.70), ("lightgbm_classifier", 0.55, 1.0),
                 ("gradient_boosting_classifier", 0.54, 1.0), ("naive_bayes_classifier", 0.52, 0.70))


def test_the_pick_leads_and_the_best_fitting_models_join_it():
    assert candidates(RANKED, "adaboost_classifier", "recommender") == [
        "adaboost_classifier", "lightgbm_classifier", "gradient_boosting_classifier"]


def test_models_that_fit_the_data_worse_than_the_pick_stay_out():
    weak = ranking(("gradient_boosting_classifier", 0.6, 1.0), ("naive_bayes_classifier", 0.5, 0.7))
    assert candidates(weak, "gradient_boosting_classifier", "recommender") == ["gradient_boosting_classifier"]


def test_a_persons_choice_is_tuned_alone():
    assert candidates(RANKED, "svm_classifier", "user") == ["svm_classifier"]


@pytest.mark.parametrize("rows, columns, expected", [(150, 5, MIN_SECONDS), (7_043, 20, 10 + 7_043 * 20 / 5_000),
                                                     (250_000, 20, MAX_SECONDS)])
def test_the_budget_is_sized_to_the_table(rows, columns, expected):
    seconds, why = budget(profile(rows, columns), intent(), configured=None)
    assert seconds == pytest.approx(expected) and "cells" in why


def test_the_goals_time_budget_wins_over_the_setting_and_the_size():
    stated = Constraint(kind="time_budget_seconds", value=120, reason="the goal says 'within 2 minutes'")
    seconds, why = budget(profile(7_043, 20), intent(TaskType.BINARY_CLASSIFICATION, stated), configured=5)
    assert seconds == pytest.approx(72) and "within 2 minutes" in why
    assert budget(profile(7_043, 20), intent(), configured=5) == (5, "DAGSMITH_SEARCH_SECONDS")


def test_the_goals_metric_decides_else_the_tasks_usual_one():
    recall = Constraint(kind="metric", value="recall", reason="the goal mentions 'recall'")
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
    said = [Constraint(kind="metric", value=named, reason=f"the goal mentions '{named}'")] if named else []
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
