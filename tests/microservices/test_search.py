"""A model's search under a pipeline's budget: validation on the training rows only, against a trivial predictor."""

import json
import time

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, RegressorMixin

from dagsmith_kit import Bundle
from dagsmith_kit.halving import PROGRESS_FILE
from dagsmith_kit.log_target import suits_log
from dagsmith_kit.search import SEARCH_FILE, VALIDATION_FILE
from tests.microservices.conftest import patient_visits, split_bundle


def searched(budget: float, metric: str, **extra) -> dict:
    return {"search": {"budget_seconds": budget, "metric": metric}, **extra}


def test_a_tuned_booster_reports_its_validation_beside_the_baseline(run, churn_split):
    out = run("gradient_boosting_classifier", churn_split, searched(12, "roc_auc")).output
    metrics, search = out.metrics(), json.loads((out.path / SEARCH_FILE).read_text())
    assert metrics["validation_score"] > 0.75 and metrics["validation_baseline"] == pytest.approx(0.5)
    assert metrics["search_trials"] > 1, "the budget leaves room for more than the given configuration"
    assert metrics["search_seconds"] < 12 + 4, "a trial that cannot finish within the budget is not started"
    assert search["score"] >= search["default_score"], "the given configuration competes too"
    assert "3-fold cross-validation on the training rows" in out.path.joinpath("report.md").read_text()
    held_out = pd.read_parquet(out.path / VALIDATION_FILE)  # what the pipeline blends candidates from
    assert sorted(held_out["row"]) == list(range(len(churn_split.table("train"))))
    assert [c for c in held_out.columns if c.startswith("proba_")] == ["proba_No", "proba_Yes"]
    assert search["features"] == churn_split.feature_columns(churn_split.table("train"))
    assert search["progress"] and not (out.path / PROGRESS_FILE).exists(), "search.json holds the progress now"


def test_the_search_improves_on_a_poor_given_configuration(run, regression_split):
    out = run("ridge_regression", regression_split, searched(6, "r2", alpha=1e4)).output
    search = json.loads((out.path / SEARCH_FILE).read_text())
    assert search["default_score"] < 0.1 < search["score"], search
    assert search["params"]["alpha"] < 1e4
    assert out.metrics()["validation_score"] == pytest.approx(search["score"], abs=1e-6)


def test_a_service_without_a_search_space_is_still_validated(run, split):
    out = run("knn_classifier", split, searched(5, "f1")).output
    metrics = out.metrics()
    assert metrics["search_trials"] == 1
    assert metrics["validation_score"] > metrics["validation_baseline"]


def test_a_model_no_better_than_the_baseline_fails_and_says_so(run, tmp_path):
    rng = np.random.default_rng(0)
    noise = pd.DataFrame(rng.normal(size=(400, 4)), columns=list("abcd"))
    noise["label"] = rng.choice(["yes", "no"], size=400)
    bundle = split_bundle(tmp_path / "noise", noise, "label", "binary_classification")
    failed = run("logistic_regression", bundle, searched(3, "roc_auc"), ok=False)
    assert "no better than the trivial baseline on validation: roc_auc" in failed.stderr


@pytest.mark.parametrize("search, message", [
    ({"budget_seconds": 0, "metric": "roc_auc"}, "budget_seconds must be a positive number"),
    ({"budget_seconds": 5, "metric": "happiness"}, "unknown search metric 'happiness'"),
    ("fast", "must be an object"),
])
def test_a_malformed_search_is_refused_by_name(run, split, search, message):
    failed = run("gradient_boosting_classifier", split, {"search": search}, ok=False)
    assert message in failed.stderr


def test_without_a_search_nothing_is_validated(run, split: Bundle):
    out = run("gradient_boosting_classifier", split, {}).output
    assert "validation_score" not in out.metrics() and not (out.path / SEARCH_FILE).exists()


def test_a_forecast_is_validated_on_later_times_than_it_learned_from(run, tmp_path):
    """A trend that only extrapolation follows: validated in time order, a forest (which cannot extrapolate) scores
    far below a linear model, as it would on the future; random folds would have hidden that."""
    rng = np.random.default_rng(1)
    year = np.arange(1950, 2250) + rng.uniform(0, 0.5, size=300)
    frame = pd.DataFrame({"year": year, "sales": 3 * (year - 1950) + rng.normal(0, 5, size=300)})
    bundle = Bundle.create(tmp_path / "trend", target="sales", task_type="time_series_forecasting",
                           time_column="year")
    shuffled = frame.sample(frac=1, random_state=0)
    bundle.write_table("train", shuffled.head(240))
    bundle.write_table("test", shuffled.tail(60))
    forest = run("random_forest_regressor", bundle, searched(3, "r2")).output
    linear = run("ridge_regression", bundle, searched(3, "r2")).output
    assert "folds in time order" in forest.path.joinpath("report.md").read_text()
    held_out = pd.read_parquet(forest.path / VALIDATION_FILE)
    train = bundle.table("train").reset_index(drop=True)
    earliest = train["year"].rank(method="first") <= 240 // 6
    assert not set(held_out["row"]) & set(train.index[earliest]), "the earliest times are only learned from"
    assert forest.metrics()["validation_score"] < 0.8 < 0.95 < linear.metrics()["validation_score"]


class PatientLookup(RegressorMixin, BaseEstimator):
    """Predicts each patient's mean level seen in fitting (the overall mean for a patient never seen): what a model
    that remembers patients does at its extreme."""

    def fit(self, X, y):
        self.levels_, self.mean_ = y.groupby(X["patient"].to_numpy()).mean(), float(y.mean())
        return self

    def predict(self, X):
        return X["patient"].map(self.levels_).fillna(self.mean_).to_numpy()


def test_a_split_by_patient_is_validated_on_patients_the_model_did_not_learn_from(run, tmp_path):
    """Each patient's level decides the target: random folds score a model that remembers patients near perfect,
    though the held-out patients are new to it; folds of whole patients score it as the test set will."""
    from dagsmith_kit.search import Search, tune

    frame = patient_visits(60, 6, seed=5)[["patient", "dose", "level"]]
    X, y = frame[["patient", "dose"]], frame["level"]

    def validated(groups):
        return tune(lambda _: PatientLookup(), {}, None, X, y, Search(5.0, "r2"), groups=groups).score

    assert validated(frame["patient"]) < 0 < 0.6 < validated(None)

    split = run("group_splitter", Bundle.create(tmp_path / "visits", frame, target="level", task_type="regression"),
                {"group_column": "patient"}).output
    assert split.group_column == "patient"
    out = run("ridge_regression", split, searched(3, "r2")).output
    assert "each group's rows in one fold" in out.path.joinpath("report.md").read_text()
    held_out = pd.read_parquet(out.path / VALIDATION_FILE)
    assert sorted(held_out["row"]) == list(range(len(split.table("train"))))


def test_a_target_that_grows_by_ratios_is_modelled_on_its_logarithm(run, tmp_path):
    """Sales growing 2% a step with errors proportional to their size: a linear model of log(sales) validates far
    better than one of sales, so the search keeps it, and the saved model still predicts sales."""
    rng = np.random.default_rng(2)
    step = np.arange(300.0)
    frame = pd.DataFrame({"step": step, "sales": np.exp(0.02 * step + rng.normal(0, 0.05, size=300))})
    bundle = Bundle.create(tmp_path / "growth", target="sales", task_type="time_series_forecasting", time_column="step")
    bundle.write_table("train", frame.head(240))
    bundle.write_table("test", frame.tail(60))
    out = run("ridge_regression", bundle, searched(3, "r2")).output
    search = json.loads((out.path / SEARCH_FILE).read_text())
    assert search["log_target"] and search["score"] > 0.9 > search["default_score"], search["history"]
    predicted = out.predictions()["prediction"]
    actual = frame.tail(60)["sales"].to_numpy()
    assert np.abs(predicted.to_numpy() / actual - 1).max() < 0.25, "the forecast follows the growth on sales' scale"
    assert type(out.load_model()).__name__ == "LogTarget"


@pytest.mark.parametrize("values, suits", [
    ([2.0, 3.0, 4.0, 5.0], False),  # narrow and symmetric
    ([1.0, 2.0, 4.0, 5.0], True),  # five times its smallest value
    ([0.0, 5.0, 50.0, 500.0], False),  # zero has no logarithm
    ([-3.0, 5.0, 50.0, 500.0], False),
    ([5.0, 6.0, 5.5, 6.5, 5.2, 40.0], True),  # a long right tail
])
def test_only_positive_wide_or_skewed_targets_try_a_log_model(values, suits):
    assert suits_log(pd.Series(values)) is suits


def test_a_search_first_tries_the_configurations_that_won_on_similar_tables(run, regression_split):
    """A poor given configuration, and one that won on a similar table: the remembered one is tried right after the
    given one, before any configuration of the search's own, and wins over the given one."""
    params = searched(10, "r2", alpha=1e4)
    params["search"]["warm_start"] = [{"alpha": 0.05}, "not a configuration", {"alpha": [1, 2], "search": {}}]
    out = run("ridge_regression", regression_split, params).output
    search = json.loads((out.path / SEARCH_FILE).read_text())
    remembered = [h for h in search["history"] if h.get("warm_start")]
    assert search["warm_starts"] == 1 and remembered == [{"params": {"alpha": 0.05}, "score": pytest.approx(
        remembered[0]["score"]), "warm_start": True}], "only a plain configuration is tried"
    assert remembered[0]["score"] > search["default_score"] + 0.3
    assert 0 < out.metrics()["search_first_useful_seconds"] <= search["best_seconds"] <= search["seconds"]
    assert "1 of them won on similar tables" in out.path.joinpath("report.md").read_text()


def test_the_search_stops_once_its_score_stops_improving(run, regression_split):
    """One setting on 331 rows: a minute's budget is far more than the search needs; it stops when trials stop
    bringing anything, not when the minute is over."""
    out = run("ridge_regression", regression_split, searched(60, "r2")).output
    search = json.loads((out.path / SEARCH_FILE).read_text())
    assert search["seconds"] < 30 and "stopped improving" in search["stopped"], search
    assert "the search stopped because the score stopped improving" in out.path.joinpath("report.md").read_text()


def test_a_configuration_that_runs_past_the_budget_is_abandoned_between_folds():
    """A forest of 1,500 trees started with time left (the given 5-tree one was quick) cannot finish three folds
    within the budget: it is abandoned after the fold that overran, not scored."""
    from sklearn.ensemble import RandomForestClassifier

    from dagsmith import datasets
    from dagsmith_kit.search import Search, tune

    cancer = datasets.load("breast_cancer")
    X, y = cancer.drop(columns=["diagnosis"]), cancer["diagnosis"]
    outcome = tune(lambda p: RandomForestClassifier(n_estimators=p.get("n_estimators", 5), random_state=0, n_jobs=1),
                   {}, lambda trial: {"n_estimators": trial.suggest_int("n_estimators", 5, 1_500)}, X, y,
                   Search(1.0, "roc_auc", warm_start=({"n_estimators": 1_500},)))
    assert [h["params"] for h in outcome.history] == ["as given"], "the large forest was not scored"
    assert outcome.params == {} and outcome.first_useful_seconds is not None


@pytest.mark.parametrize("rival_score, halted", [(1.0, True), (0.5, False)])
def test_a_candidate_trailing_a_finished_rival_stops_at_a_rung(rival_score, halted, tmp_path):
    """A forest searched for 4 s against a model that finished before it: behind a perfect rival it stops at its first
    rung (a second in), having kept its best so far; ahead of a poor one it searches on. Its progress is shown in its
    output folder as it goes, for the candidates beside it."""
    from sklearn.ensemble import RandomForestClassifier

    from dagsmith import datasets
    from dagsmith_kit.halving import Rival
    from dagsmith_kit.search import Search, tune

    cancer = datasets.load("breast_cancer")
    X, y = cancer.drop(columns=["diagnosis"]), cancer["diagnosis"]
    outcome = tune(lambda p: RandomForestClassifier(n_estimators=p.get("n_estimators", 5), random_state=0, n_jobs=1),
                   {}, lambda trial: {"n_estimators": trial.suggest_int("n_estimators", 5, 60)}, X, y,
                   Search(4.0, "roc_auc", rivals=(Rival("logistic_regression", ((0.3, rival_score),)),),
                          output=tmp_path))
    assert outcome.stopped.startswith("successive halving: ") is halted, outcome.stopped
    shown = json.loads((tmp_path / PROGRESS_FILE).read_text())
    assert shown == {"progress": [list(point) for point in outcome.progress]}
    if halted:
        assert 1.0 <= outcome.seconds < 3.0 and "trailed logistic_regression's at the same point" in outcome.stopped
    assert outcome.score > outcome.baseline and outcome.progress[0][1] == pytest.approx(outcome.default_score, abs=1e-6)


def test_a_search_of_slow_configurations_stops_after_fewer_that_bring_nothing():
    """Where each configuration takes long (here about a second on purpose: three folds of a model that waits 0.3 s
    to fit), 15 in a row without a gain would outlast the budget: 5 over a third of it stop the search before the
    budget is spent. The table is small so that the waits, not the fits, take the time on a machine busy with other
    tests."""
    from sklearn.linear_model import LogisticRegression

    from dagsmith import datasets
    from dagsmith_kit.search import SLOW_PATIENCE, Search, tune

    class Slow(LogisticRegression):
        def fit(self, X, y, sample_weight=None):
            time.sleep(0.3)
            return super().fit(X, y, sample_weight)

    cancer = datasets.load("breast_cancer").sample(150, random_state=0)
    X, y = cancer.drop(columns=["diagnosis"]).iloc[:, :4], cancer["diagnosis"]
    X = (X - X.mean()) / X.std()
    budget = 12.0
    outcome = tune(lambda p: Slow(C=p.get("C", 1.0)), {}, lambda trial: {"C": trial.suggest_float("C", 1.0, 1.0)},
                   X, y, Search(budget, "roc_auc"))
    assert outcome.stopped.startswith(f"the score stopped improving ({SLOW_PATIENCE} configurations in a row, over "), \
        outcome.stopped
    assert outcome.trials == 1 + SLOW_PATIENCE and outcome.seconds < budget, outcome.seconds


@pytest.mark.parametrize("wanders", [True, False])
def test_a_forecast_learns_its_change_from_its_past_unless_its_level_validates_better(run, tmp_path, wanders):
    """A walk that drifts upwards leaves the levels a forest saw: its change over the horizon, added to the value a
    horizon back, follows it. A season around a steady level is the other way round: the value a horizon back carries
    its own noise, which the change would add to every forecast."""
    rng = np.random.default_rng(3)
    step = np.arange(400.0)
    season = 10 * np.sin(2 * np.pi * step / 10)
    level = np.cumsum(rng.normal(1.0, 1.0, 400)) if wanders else 50 + season + rng.normal(0, 3, 400)
    frame = pd.DataFrame({"step": step, "phase": step % 10, "level": level,
                          "level_lag_5": np.r_[np.full(5, level[0]), level[:-5]]})
    bundle = Bundle.create(tmp_path / "walk", target="level", task_type="time_series_forecasting", time_column="step")
    bundle.meta["naive_forecast"] = "level_lag_5"
    bundle.save_meta()
    bundle.write_table("train", frame.head(320))
    bundle.write_table("test", frame.tail(80))
    # a budget that leaves room for both scales on a loaded machine (the search stops early once neither improves)
    out = run("random_forest_regressor", bundle, searched(10, "r2")).output
    search = json.loads((out.path / SEARCH_FILE).read_text())
    assert search["past_change"] is wanders, search["history"]
    assert type(out.load_model()).__name__ == ("PastChange" if wanders else "RandomForestRegressor")
    if wanders:  # beyond every level of the training rows, still within a few steps of the truth
        errors = out.predictions()["prediction"].to_numpy() - frame.tail(80)["level"].to_numpy()
        assert np.abs(errors).mean() < 10 and frame.tail(80)["level"].min() > frame.head(320)["level"].max()
