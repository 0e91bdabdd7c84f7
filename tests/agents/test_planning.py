"""Recommendation (A3), building (A4) and the whole plan, on real data and the real catalog in PostgreSQL."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import func, select

from dagsmith import datasets
from dagsmith.agents.choices import ChoiceError
from dagsmith.agents.intent.understanding import understand
from dagsmith.agents.planner import plan
from dagsmith.agents.profiler import profile_dataset
from dagsmith.agents.repeats import entity_column
from dagsmith.agents.recommender import recommend
from dagsmith.agents.stages import ordered
from dagsmith.catalog import repository
from dagsmith.embeddings import CachedEmbedder, MiniLMEmbedder
from dagsmith.models.catalog import AnalysisMode, Stage
from dagsmith.models.intent import GivenFields
from dagsmith.models.plan import RankingMode
from dagsmith.store import schema
from dagsmith.store.db import session_scope


@pytest.fixture(scope="module")
def churn_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "churn.csv"
    datasets.load("wa_churn").to_csv(path, index=False)
    return path


def _recommend(path, goal, settings, embedder, mode=RankingMode.FULL, user=None):
    profile = profile_dataset(path)
    intent = understand(goal, profile)
    with session_scope(settings) as session:
        entries = repository.entries(session, AnalysisMode.DOCUMENTATION if mode is RankingMode.DOCUMENTATION
                                     else AnalysisMode.CODE)
        return recommend(intent, profile, intent.required_stages, entries, session=session, embedder=embedder,
                         mode=mode, user=user), intent


def test_every_required_stage_gets_explained_candidates(catalog_settings, embedder, churn_csv):
    recommendation, intent = _recommend(churn_csv, "predict customer churn", catalog_settings, embedder)
    assert [s.stage for s in recommendation.stages] == ordered(intent.required_stages)
    for stage in recommendation.stages:
        assert 1 <= len(stage.top) <= 3, stage.stage
        if stage.stage in {Stage.IMPUTATION, Stage.ENCODING, Stage.MODELLING}:
            assert len(stage.top) == 3 and len(stage.candidates) > 3, "alternatives are kept for self-healing"
        for candidate in stage.top:
            assert 0 <= candidate.score <= 1 and candidate.reason.startswith("keyword ")
            for value in candidate.signals.model_dump().values():
                assert 0.0 <= value <= 1.0
        assert [c.score for c in stage.candidates] == sorted((c.score for c in stage.candidates), reverse=True)
    modelling = recommendation.for_stage(Stage.MODELLING)
    regressors = {"linear_regression", "ridge_regression", "random_forest_regressor", "gradient_boosting_regressor",
                  "knn_regressor", "svr_regressor"}
    assert not regressors & {c.microservice for c in modelling.candidates}, "a regressor is no classifier"
    assert "logistic_regression" in {c.microservice for c in modelling.candidates}


def test_compatibility_prefers_models_that_handle_the_raw_data(catalog_settings, embedder, tmp_path):
    """Churn has text columns and gaps: without encoding and imputation before it, only native models fit well."""
    path = tmp_path / "raw.parquet"
    datasets.load("wa_churn").to_parquet(path)
    profile = profile_dataset(path)
    intent = understand("predict churn", profile)
    stages = [Stage.LOADING, Stage.SPLITTING, Stage.MODELLING]
    with session_scope(catalog_settings) as session:
        entries = repository.entries(session, AnalysisMode.CODE)
        result = recommend(intent, profile, stages, entries, session=session, embedder=embedder)
    top = result.for_stage(Stage.MODELLING).candidates[0]
    native = {"gradient_boosting_classifier", "lightgbm_classifier"}  # the shipped models with native categories
    assert top.microservice in native, [c.microservice for c in result.for_stage(Stage.MODELLING).top]
    assert "categorical columns natively" in top.reason
    loader = result.for_stage(Stage.LOADING).candidates
    assert loader[0].microservice == "tabular_loader"
    assert any("reads csv" in c.reason.lower() for c in loader if c.microservice == "csv_loader")


@pytest.mark.parametrize("rows", [1000, 120])
def test_estimator_strength_ranks_ensembles_first_unless_the_data_is_small(catalog_settings, embedder, tmp_path, rows):
    """With no history, the code's estimator decides between models that fit the data equally well: on a thousand
    rows boosted trees and forests lead and a single tree or naive Bayes trail; on a hundred rows strength is not
    used."""
    path = tmp_path / "cancer.csv"
    datasets.load("breast_cancer").sample(rows, replace=rows > 569, random_state=0).to_csv(path, index=False)
    result, _ = _recommend(path, "classify the tumour as malignant or benign", catalog_settings, embedder,
                           mode=RankingMode.NO_HISTORY)
    ranked = [c.microservice for c in result.for_stage(Stage.MODELLING).candidates]
    reasons = {c.microservice: c.reason for c in result.for_stage(Stage.MODELLING).candidates}
    if rows >= 300:
        assert ranked[0] in {"gradient_boosting_classifier", "lightgbm_classifier", "random_forest_classifier"}, ranked
        assert ranked.index("random_forest_classifier") < ranked.index("decision_tree_classifier")
        assert ranked.index("lightgbm_classifier") < ranked.index("naive_bayes_classifier")
        assert "usual strength on tabular data: 0.70" in reasons["decision_tree_classifier"]
    else:
        assert not any("usual strength" in reason for reason in reasons.values())


def test_documentation_mode_trusts_a_misleading_manifest(catalog_settings, embedder, tmp_path):
    """standard_scaler_strict's manifest claims it handles missing values; only the code says otherwise."""
    frame = datasets.load("penguins")
    path = tmp_path / "penguins.csv"
    frame.to_csv(path, index=False)
    profile = profile_dataset(path)
    intent = understand("group these penguins into clusters", profile)
    stages = [Stage.SCALING]
    with session_scope(catalog_settings) as session:
        code = recommend(intent, profile, stages, repository.entries(session, AnalysisMode.CODE),
                         session=session, embedder=embedder)
        docs = recommend(intent, profile, stages, repository.entries(session, AnalysisMode.DOCUMENTATION),
                         session=session, embedder=embedder, mode=RankingMode.DOCUMENTATION)
    strict_code = next(c for c in code.stages[0].candidates if c.microservice == "standard_scaler_strict")
    assert "refuses missing values" in strict_code.reason
    assert code.stages[0].candidates[0].microservice != "standard_scaler_strict"
    assert any(c.microservice == "standard_scaler_strict" for c in docs.stages[0].top)


def test_execution_history_raises_rank_and_per_user_history_weighs_in(store, embedder, churn_csv):
    settings = store
    before, _ = _recommend(churn_csv, "predict customer churn", settings, embedder)
    imputation = before.for_stage(Stage.IMPUTATION)
    underdog = imputation.candidates[-1].microservice
    with session_scope(settings) as session:
        service_id = session.scalar(select(schema.Microservice.id).where(schema.Microservice.name == underdog))
        session.add(schema.Pattern(kind="stage", owner="", stage="imputation", microservice_id=service_id,
                                   successes=90, failures=0))
        session.add(schema.Pattern(kind="stage", owner="ana", stage="imputation", microservice_id=service_id,
                                   successes=100, failures=0))
    after, _ = _recommend(churn_csv, "predict customer churn", settings, embedder)
    promoted = after.for_stage(Stage.IMPUTATION).candidates
    rank = lambda result, name: [c.microservice for c in result].index(name)  # noqa: E731
    assert rank(promoted, underdog) < rank(imputation.candidates, underdog)
    assert "90 successful prior uses" in next(c.reason for c in promoted if c.microservice == underdog)
    for_ana, _ = _recommend(churn_csv, "predict customer churn", settings, embedder, user="ana")
    score = lambda result: next(c.signals.pattern for c in result.for_stage(Stage.IMPUTATION).candidates  # noqa: E731
                                if c.microservice == underdog)
    assert score(for_ana) > score(after)
    ablation, _ = _recommend(churn_csv, "predict customer churn", settings, embedder, mode=RankingMode.NO_HISTORY)
    assert score(ablation) == 0.0


def test_plan_builds_validates_and_stores_a_ready_pipeline(catalog_settings, embedder, churn_csv):
    result = plan(churn_csv, "predict customer churn", user="ana", settings=catalog_settings, embedder=embedder)
    spec = result.pipeline
    assert spec.valid and spec.status == "ready" and spec.id is not None
    stages = [s.stage for s in spec.steps]
    assert stages.index(Stage.SPLITTING) < stages.index(Stage.MODELLING) < stages.index(Stage.EVALUATION)
    evaluation = next(s for s in spec.steps if s.stage is Stage.EVALUATION)
    modelling = next(s for s in spec.steps if s.stage is Stage.MODELLING)
    assert evaluation.depends_on == [modelling.position]
    split = next(s for s in spec.steps if s.stage is Stage.SPLITTING)
    assert split.params.get("stratify") is True and "stratified" in split.param_reasons["stratify"]
    assert all(s.alternatives for s in spec.steps if s.stage is Stage.MODELLING)
    with session_scope(catalog_settings) as session:
        row = session.get(schema.Pipeline, spec.id)
        assert (row.owner, row.status, row.task_type, row.target) == ("ana", "ready", "binary_classification", "churn")
        steps = session.scalar(select(func.count()).select_from(schema.PipelineStep)
                               .where(schema.PipelineStep.pipeline_id == spec.id))
        assert steps == len(spec.steps)


def test_planning_again_embeds_nothing_once_its_queries_were_seen(catalog_settings, embedder, churn_csv, tmp_path):
    first = plan(churn_csv, "predict customer churn", settings=catalog_settings,
                 embedder=CachedEmbedder(embedder.inner, tmp_path)).pipeline
    fresh = MiniLMEmbedder()  # a new process's model, not loaded
    again = plan(churn_csv, "predict customer churn", settings=catalog_settings,
                 embedder=CachedEmbedder(fresh, tmp_path)).pipeline
    assert fresh._model is None, "the stage queries were embedded before: the model is not loaded"
    assert [(s.stage, s.microservice) for s in again.steps] == [(s.stage, s.microservice) for s in first.steps]


def test_a_person_can_choose_and_a_bad_choice_is_refused(catalog_settings, embedder, churn_csv):
    result = plan(churn_csv, "predict customer churn", settings=catalog_settings, embedder=embedder, save=False,
                  choices={Stage.MODELLING: "logistic_regression"})
    modelling = next(s for s in result.pipeline.steps if s.stage is Stage.MODELLING)
    assert (modelling.microservice, modelling.chosen_by) == ("logistic_regression", "user")
    with pytest.raises(ChoiceError, match="not a candidate"):
        plan(churn_csv, "predict customer churn", settings=catalog_settings, embedder=embedder, save=False,
             choices={Stage.MODELLING: "kmeans_clustering"})


def test_records_entered_twice_are_deduplicated_on_their_id_and_chance_repeats_are_kept(catalog_settings, embedder,
                                                                                        churn_csv, tmp_path):
    churn = datasets.load("wa_churn").assign(customer_id=lambda f: [f"C{i:05d}" for i in range(len(f))])
    again = churn.head(15).assign(monthly_charges=lambda f: f["monthly_charges"] + 5)  # re-entered, one field changed
    path = tmp_path / "customers.csv"
    pd.concat([churn, again], ignore_index=True).to_csv(path, index=False)
    result = plan(path, "predict customer churn", settings=catalog_settings, embedder=embedder, save=False)
    step = next(s for s in result.pipeline.steps if s.stage is Stage.DEDUPLICATION)
    assert step.params["subset"] == ["customer_id"] and "one record" in step.param_reasons["subset"]

    kept = plan(churn_csv, "predict customer churn", settings=catalog_settings, embedder=embedder,
                save=False)
    assert Stage.DEDUPLICATION not in {s.stage for s in kept.pipeline.steps}
    assert "coincide by chance" in kept.intent.reasons["stage.deduplication"]


def test_an_evaluator_that_reports_the_metric_the_model_is_judged_by_ranks_first(catalog_settings, embedder, tmp_path):
    path = tmp_path / "diabetes.csv"
    datasets.load("diabetes").to_csv(path, index=False)
    profile = profile_dataset(path)

    def evaluators(given):
        intent = understand("predict progression", profile, given=given)
        with session_scope(catalog_settings) as session:
            ranked = recommend(intent, profile, intent.required_stages, repository.entries(session, AnalysisMode.CODE),
                               session=session, embedder=embedder).for_stage(Stage.EVALUATION)
        return {c.microservice: c for c in ranked.candidates}, ranked.top[0].microservice

    by_r2, top = evaluators(None)
    assert "does not report R², the measure the model is judged by" in by_r2["regression_error_evaluator"].reason
    assert "reports R²" in by_r2[top].reason
    by_mae, _ = evaluators(GivenFields(metric="mae"))
    assert "reports mae, the measure the model is judged by" in by_mae["regression_error_evaluator"].reason
    assert by_mae["regression_error_evaluator"].score > by_r2["regression_error_evaluator"].score


def test_an_entitys_rows_stay_on_one_side_of_the_split_whatever_the_history(store, embedder, tmp_path):
    """Patients seen five times each: a random split would test the model on patients it learned from, so the grouped
    splitter splits by patient, even over a random splitter with a hundred successes elsewhere."""
    rng = np.random.default_rng(3)
    visits = pd.DataFrame({"patient_id": np.repeat(np.arange(1000, 1150), 5), "visit": np.tile(np.arange(1, 6), 150),
                           "age": np.repeat(rng.integers(20, 80, 150), 5), "dose": rng.normal(size=750).round(3)})
    visits["relapsed"] = np.where(visits["age"] / 80 + rng.normal(0, 0.3, 750) > 0.7, "yes", "no")
    path = tmp_path / "visits.csv"
    visits.to_csv(path, index=False)
    with session_scope(store) as session:
        random_split = session.scalar(select(schema.Microservice.id)
                                      .where(schema.Microservice.name == "train_test_splitter"))
        session.add(schema.Pattern(kind="stage", owner="", stage="splitting", microservice_id=random_split,
                                   successes=100, failures=0))
    planned = plan(path, "predict relapsed", settings=store, embedder=embedder, save=False)
    split = next(s for s in planned.pipeline.steps if s.stage is Stage.SPLITTING)
    assert split.microservice == "group_splitter" and split.params["group_column"] == "patient_id"
    assert "about 5.0 rows each" in split.param_reasons["group_column"]
    ranked = {c.microservice: c for c in planned.recommendation.for_stage(Stage.SPLITTING).candidates}
    assert "the rows of one 'patient_id' (about 5.0 each)" in ranked["train_test_splitter"].reason
    assert "100 successful prior uses, not counted for this data" in ranked["train_test_splitter"].reason
    assert ranked["train_test_splitter"].signals.pattern == 0.0
    assert any("'patient_id' identifies an entity" in w.message for w in planned.intent.warnings)

    codes = visits.assign(patient_id=visits["patient_id"] % 10)  # ten values shared by 75 rows each: a category
    codes.to_csv(path, index=False)
    kept = plan(path, "predict relapsed", settings=store, embedder=embedder, save=False)
    assert next(s for s in kept.pipeline.steps if s.stage is Stage.SPLITTING).microservice == "train_test_splitter"
    visits.assign(patient_id=visits["patient_id"].where(visits.index != 7)).to_csv(path, index=False)
    assert entity_column(profile_dataset(path), "relapsed") is None, "a row without its patient has no side"


def test_a_model_that_encodes_and_imputes_itself_gets_the_raw_columns(catalog_settings, embedder, churn_csv):
    """Churn has text columns and gaps; the top model splits on categories and routes gaps natively, so no one-hot
    encoder or mean imputer runs before it, and only models that read the raw columns too (natively, or encoding
    and filling gaps inside themselves, as the linear model does) are searched or healed with."""
    result = plan(churn_csv, "predict customer churn", settings=catalog_settings, embedder=embedder, save=False)
    spec = result.pipeline
    stages = {s.stage for s in spec.steps}
    assert spec.valid and Stage.ENCODING not in stages and Stage.IMPUTATION not in stages
    assert {Stage.ENCODING, Stage.IMPUTATION} <= set(result.intent.required_stages)
    modelling = next(s for s in spec.steps if s.stage is Stage.MODELLING)
    raw = {"lightgbm_classifier", "gradient_boosting_classifier", "logistic_regression"}
    assert set(modelling.search.candidates) <= raw and set(modelling.alternatives) <= raw
    assert "imputation and encoding left to the models" in modelling.search.reason

    def planned_stages(model: str) -> set[Stage]:
        chosen = plan(churn_csv, "predict customer churn", settings=catalog_settings, embedder=embedder, save=False,
                      choices={Stage.MODELLING: model})
        return {s.stage for s in chosen.pipeline.steps}

    assert {Stage.ENCODING, Stage.IMPUTATION} <= planned_stages("svm_classifier")
    assert not {Stage.ENCODING, Stage.IMPUTATION} & planned_stages("logistic_regression")


def test_a_service_that_bounds_its_own_work_gets_a_tenth_of_the_goals_time_budget(catalog_settings, embedder,
                                                                                   churn_csv):
    planned = plan(churn_csv, "predict customer churn within 2 minutes", settings=catalog_settings,
                   embedder=embedder, save=False, choose=["explanation=model_explainer"]).pipeline
    explainer = next(s for s in planned.steps if s.microservice == "model_explainer")
    assert explainer.params["budget_seconds"] == 12
    assert explainer.param_reasons["budget_seconds"] == "10% of the goal's time budget (120 s)"


def test_a_share_of_anomalies_in_the_goal_reaches_the_detector(catalog_settings, embedder, tmp_path):
    path = tmp_path / "credit.csv"
    datasets.load("credit_data").to_csv(path, index=False)
    planned = plan(path, "flag the 2% most unusual credit applicants", settings=catalog_settings,
                   embedder=embedder).pipeline
    detector = next(s for s in planned.steps if s.stage == Stage.ANOMALY_DETECTION)
    assert detector.params["contamination"] == 0.02
    assert detector.param_reasons["contamination"] == "the goal asks for the 2.0% most unusual rows"
