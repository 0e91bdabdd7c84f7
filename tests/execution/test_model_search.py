"""The modelling stage's search through real runs: the best validation wins (or the candidates' blend when that
validates better), a failed candidate is one fewer, and a table nothing can learn from fails the run saying so."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import r2_score
from sqlalchemy import select

from dagsmith.agents.planner import plan
from dagsmith.cli.report import progress_lines
from dagsmith.config import CANDIDATES_AT_ONCE_VARIABLE
from dagsmith.execution.deadline import MIN_CANDIDATE_SECONDS
from dagsmith.execution.search import RELAY_SECONDS, Race, write_rivals
from dagsmith.execution.workspace import Workspace
from dagsmith.learning.configurations import search_winners
from dagsmith.models.execution import Decision, SearchSummary, StepStatus, TryAction
from dagsmith.models.intent import GivenFields
from dagsmith.models.catalog import Stage
from dagsmith.models.plan import ModelSearch
from dagsmith.runtime.base import Invocation, Limits
from dagsmith.runtime.local import LocalRuntime
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from dagsmith.store.pipelines import service_names
from dagsmith_kit import Bundle
from dagsmith_kit.bundle import REPORT_FILE
from dagsmith_kit.halving import PROGRESS_FILE, RIVALS_FILE
from dagsmith_kit.search import SEARCH_FILE
from tests.execution.conftest import NUMERIC_PREPARATION, run_dag
from tests.waiting import wait_until


def _search_exactly(settings, planned, candidates: list[str], params: dict[str, dict], blend: bool = False,
                    budget_seconds: float | None = None) -> int:
    """Make the modelling step search ``candidates`` with ``params`` (and blend them or not, each within
    ``budget_seconds`` when given); returns its position."""
    modelling = next(s for s in planned.steps if s.stage == "modelling")
    with session_scope(settings) as session:
        step = session.scalar(select(schema.PipelineStep).where(schema.PipelineStep.pipeline_id == planned.id,
                                                                schema.PipelineStep.position == modelling.position))
        search = ModelSearch.model_validate(step.search)
        budget = {"budget_seconds": budget_seconds} if budget_seconds else {}
        step.search = search.model_copy(update={"candidates": candidates, "params": params, "blend": blend, **budget}
                                        ).model_dump(mode="json")
    return modelling.position


def _candidate_tries(settings, execution_id: int) -> list[tuple[str, dict, int]]:
    """The run's candidate tries in the order they started: service, params, attempt number."""
    with session_scope(settings) as session:
        names = service_names(session)
        tries = session.scalars(select(schema.StepAttempt).where(schema.StepAttempt.execution_id == execution_id)
                                .order_by(schema.StepAttempt.started_at))
        return [(names[t.microservice_id], t.params, t.attempt) for t in tries if "search" in t.params]


#: A local run that fits one candidate at a time, so each later one races those before it.
ONE_AT_ONCE = {CANDIDATES_AT_ONCE_VARIABLE: "1"}


def _overlap(settings, execution_id: int) -> bool:
    """Whether the run's candidate tries ran side by side: the last to start began before the first ended."""
    with session_scope(settings) as session:
        tries = [t for t in session.scalars(select(schema.StepAttempt).where(
            schema.StepAttempt.execution_id == execution_id).order_by(schema.StepAttempt.started_at))
            if "search" in t.params]
    return len(tries) > 1 and tries[-1].started_at < min(t.finished_at for t in tries)


def _modelling_tries(outcome: dict) -> list[dict]:
    return next(s for s in outcome["trace"]["steps"] if s["stage"] == "modelling")["attempts"]


def test_the_model_with_the_best_validation_wins_whatever_the_ranking(store, embedder, churn_csv):
    planned = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder,
                   choices=NUMERIC_PREPARATION).pipeline
    position = _search_exactly(store, planned, ["decision_tree_classifier", "gradient_boosting_classifier"],
                               {"decision_tree_classifier": {"max_depth": 1},  # a stump, ranked first
                                "gradient_boosting_classifier": {"max_iter": 100}})
    outcome = run_dag(store, planned.id, churn_csv, variables=ONE_AT_ONCE)
    assert outcome["status"] == "completed", outcome["error"]
    search = outcome["trace"]["search"][str(position)]
    stump, booster = search["candidates"]
    assert search["winner"] == "gradient_boosting_classifier", search
    assert booster["validation_score"] > stump["validation_score"] > stump["validation_baseline"]
    assert search["metric"] == "roc_auc" and "best validation roc_auc" in search["reason"]
    tries = _modelling_tries(outcome)  # in the order Airflow ran the candidates' tasks
    assert sorted(t["status"] for t in tries) == ["completed", "skipped"]
    assert next(t for t in tries if t["status"] == "skipped")["decision"]["action"] == "outperformed"
    (first, first_params, _), (second, second_params, _) = _candidate_tries(store, outcome["execution_id"])
    assert (first, second) == ("decision_tree_classifier", "gradient_boosting_classifier"), "in rank order"
    assert not _overlap(store, outcome["execution_id"])
    assert "rivals" not in first_params["search"], "the first candidate (one at a time here) races nobody"
    assert [r["name"] for r in second_params["search"]["rivals"]] == [first]
    raced = json.loads((outcome["workspace"] / "steps" / f"{position:02d}" / SEARCH_FILE).read_text())  # the winner's
    assert raced["rivals"] == [first] and raced["progress"] and "successive halving" not in raced["stopped"], raced
    # what each candidate's search chose is history now: the next search on a table like this one starts there
    assert stump["params"]["max_depth"] and booster["params"]["max_iter"]
    assert search["table"]["task_type"] == "binary_classification"
    with session_scope(store) as session:
        learned = search_winners(session)
    assert [(w.service, w.params, w.source) for w in learned] == [
        ("decision_tree_classifier", stump["params"], "history"), ("gradient_boosting_classifier", booster["params"],
                                                                   "history")]
    again = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder,
                 choices=NUMERIC_PREPARATION | {Stage.MODELLING: "gradient_boosting_classifier"}).pipeline
    searched = next(s for s in again.steps if s.stage == "modelling").search
    assert searched.warm_start["gradient_boosting_classifier"][0] == booster["params"], searched.warm_start
    assert "the most similar tables (the portfolio and this deployment's runs)" in searched.reason


def test_a_failed_candidate_is_one_fewer_to_choose_from(store, embedder, churn_csv):
    planned = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder,
                   choices=NUMERIC_PREPARATION).pipeline
    position = _search_exactly(store, planned, ["svm_classifier", "logistic_regression"],
                               {"svm_classifier": {"max_rows": 50}})  # refuses 1,125 training rows
    outcome = run_dag(store, planned.id, churn_csv)
    assert outcome["status"] == "completed", outcome["error"]
    search = outcome["trace"]["search"][str(position)]
    assert search["winner"] == "logistic_regression"
    # the trace keeps the search's typed summary as JSON
    assert SearchSummary.model_validate(search).model_dump(mode="json") == search
    assert outcome["trace"]["answer"].startswith("Predicts churn (binary classification) with logistic_regression")
    assert "max_rows" in search["candidates"][0]["error"] or "too slow" in search["candidates"][0]["error"]
    assert sorted(t["status"] for t in _modelling_tries(outcome)) == ["completed", "failed"]


def test_a_spent_time_budget_cuts_the_first_candidate_short_and_runs_no_other(store, embedder, churn_csv):
    """A one-second budget is spent before the search starts: the first candidate fits with the least budget, so the
    selection has a model, and the others are not run; each decision says how the time was counted."""
    planned = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder,
                   choices=NUMERIC_PREPARATION, given=GivenFields(time_budget=1)).pipeline
    position = _search_exactly(store, planned, ["logistic_regression", "decision_tree_classifier"], {})
    outcome = run_dag(store, planned.id, churn_csv, variables=ONE_AT_ONCE)
    assert outcome["status"] == "completed", outcome["error"]
    [(first, params, _)] = _candidate_tries(store, outcome["execution_id"])
    assert first == "logistic_regression" and params["search"]["budget_seconds"] == MIN_CANDIDATE_SECONDS
    report = (outcome["workspace"] / "steps" / f"{position:02d}" / REPORT_FILE).read_text()
    assert re.search(r"Budgets under the goal's time budget: logistic_regression: 1 s time budget: \d+ s taken, "
                     r"about \d+ s for the steps after the search, 0 s left for 2 candidate\(s\), 1 at a time; the "
                     r"least a candidate gets\.", report), report
    assert "| decision_tree_classifier | – | – | – | – | not run: the time budget was spent |" in report
    assert "over the time budget of 1 s" in outcome["trace"]["answer"]


def test_a_table_nothing_learns_from_fails_the_run_saying_so(store, embedder, tmp_path):
    rng = np.random.default_rng(3)
    noise = pd.DataFrame(rng.normal(size=(300, 4)), columns=["sensor_a", "sensor_b", "sensor_c", "sensor_d"])
    noise["crop_yield"] = rng.normal(50, 5, size=300)
    path = tmp_path / "noise.csv"
    noise.to_csv(path, index=False)
    planned = plan(path, "predict the crop yield", settings=store, embedder=embedder).pipeline
    assert planned.task_type == "regression" and planned.valid
    outcome = run_dag(store, planned.id, path)
    assert outcome["status"] == "failed"
    assert "no better than the trivial baseline" in outcome["error"], outcome["error"]
    assert {t["error_class"] for t in _modelling_tries(outcome)} == {"no_better_than_baseline"}


def test_models_that_each_see_part_of_the_signal_are_handed_on_as_their_blend(store, embedder, tmp_path):
    """A linear trend that trees approximate in steps, plus an interaction a linear model cannot express: their
    weighted average validates better than either, and every step after the search reads that average."""
    rng = np.random.default_rng(7)
    table = pd.DataFrame(rng.normal(size=(600, 8)), columns=[f"gauge_{i}" for i in range(8)])
    table["output_kw"] = (table.to_numpy() @ np.array([1.0, 0.8, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1])
                          + 3 * ((table.gauge_0 > 0) & (table.gauge_1 > 0)) + rng.normal(0, 0.5, 600))
    path = tmp_path / "turbines.csv"
    table.to_csv(path, index=False)
    planned = plan(path, "predict the output_kw", settings=store, embedder=embedder).pipeline
    position = _search_exactly(store, planned, ["ridge_regression", "random_forest_regressor"], {}, blend=True)
    outcome = run_dag(store, planned.id, path, variables={CANDIDATES_AT_ONCE_VARIABLE: "2"})
    assert outcome["status"] == "completed", outcome["error"]
    assert _overlap(store, outcome["execution_id"]), "one task of the in-process run fits both side by side"
    search = outcome["trace"]["search"][str(position)]
    assert set(search["blend"]) == {"ridge_regression", "random_forest_regressor"}, search
    assert "weighted average of 2 models" in search["reason"]
    assert re.fullmatch(r"(ridge_regression|random_forest_regressor) \(\d+%\) and (?!\1)\w+ \(\d+%\)", search["model"])
    assert outcome["trace"]["answer"].startswith(f"Predicts output_kw (regression) with {search['model']}. ")
    tries = [(t["status"], t["decision"]["action"]) for t in _modelling_tries(outcome)]
    assert tries == [("completed", "selected")] * 2
    shown = "\n".join(progress_lines(store, outcome["execution_id"], set()))
    assert shown.count("(chosen)") == 2 and shown.count("★") == 1, shown  # the blend's one reason, said once
    with session_scope(store) as session:
        workspace = Path(session.get(schema.Execution, outcome["execution_id"]).workspace)
    handed_on = Bundle.open(workspace / "steps" / f"{position:02d}")
    blend, test = handed_on.load_model(), handed_on.table("test")
    assert type(blend).__name__ == "BlendedRegressor" and len(blend.members_) == 2
    predicted = handed_on.predictions()["prediction"]
    assert np.allclose(blend.predict(test), predicted), "the held-out predictions are the blend's own"
    alone = [r2_score(test["output_kw"], model.predict(test[features])) for model, features in blend.members_]
    assert r2_score(test["output_kw"], predicted) > max(alone), alone
    explained = json.loads(next((workspace / "steps").glob("*/explanation.json")).read_text())
    assert {d["feature"] for d in explained["drivers"][:3]} & {"gauge_0", "gauge_1"}, "the explanation read the blend"


def test_candidates_side_by_side_race_each_other_and_share_the_time_budget_as_one_round(store, embedder, tmp_path):
    """A linear target: ridge regression finds it at once and completes while the forest beside it, far behind,
    still searches; handed ridge's progress, the forest stops at its next rung instead of spending its budget. Side
    by side, both may spend what the goal's time budget leaves, not half of it each."""
    rng = np.random.default_rng(11)
    table = pd.DataFrame(rng.normal(size=(400, 6)), columns=[f"sensor_{i}" for i in range(6)])
    table["load_kw"] = table.to_numpy() @ np.array([1.0, -0.8, 0.6, 0.5, -0.4, 0.3]) + rng.normal(0, 0.1, 400)
    path = tmp_path / "plant.csv"
    table.to_csv(path, index=False)
    planned = plan(path, "predict the load_kw", settings=store, embedder=embedder,
                   given=GivenFields(time_budget=50)).pipeline
    budget = 22.0  # more than half of what 50 s leave after the steps before and after the search, less than all
    position = _search_exactly(store, planned, ["ridge_regression", "random_forest_regressor"], {},
                               budget_seconds=budget)
    outcome = run_dag(store, planned.id, path, variables={CANDIDATES_AT_ONCE_VARIABLE: "2"})
    assert outcome["status"] == "completed", outcome["error"]
    assert _overlap(store, outcome["execution_id"]), "both candidates start together"
    assert outcome["trace"]["search"][str(position)]["winner"] == "ridge_regression"
    tries = _candidate_tries(store, outcome["execution_id"])
    assert [params["search"]["budget_seconds"] for _, params, _ in tries] == [budget, budget]
    forest = next(number for name, _, number in tries if name == "random_forest_regressor")
    workspace = outcome["workspace"]
    raced = json.loads((workspace / "attempts" / f"{position:02d}-{forest}" / SEARCH_FILE).read_text())
    assert raced["rivals"] == ["ridge_regression"] and raced["stopped"].startswith("successive halving"), raced
    assert raced["seconds"] < 0.75 * budget, raced
    assert not list(workspace.rglob(RIVALS_FILE)), "what was handed over is no part of any step's output"
    report = (workspace / "steps" / f"{position:02d}" / REPORT_FILE).read_text()
    assert re.search(r"ridge_regression: 50 s time budget: \d+ s taken, about \d+ s for the steps after the search, "
                     r"\d+ s left for 2 candidate\(s\), 2 at a time", report), report
    _relay_hands_a_running_rivals_progress_as_it_grows(store, outcome["execution_id"], position, workspace,
                                                      {name: number for name, _, number in tries})


def _relay_hands_a_running_rivals_progress_as_it_grows(settings, execution_id: int, position: int, workspace: Path,
                                                       numbers: dict[str, int]) -> None:
    """Ridge's try as if it ran again beside a forest still running: it is handed the forest's progress as the forest
    shows it, growing; nothing while what the forest shows is a pipe that would never answer; none once the forest
    failed."""
    forest, ridge = numbers["random_forest_regressor"], numbers["ridge_regression"]
    forest_out, ridge_out = (workspace / "attempts" / f"{position:02d}-{n}" for n in (forest, ridge))
    ridge_out.mkdir()  # its output became the step's
    (forest_out / SEARCH_FILE).unlink()
    os.mkfifo(forest_out / PROGRESS_FILE)

    forest_try = select(schema.StepAttempt).join(schema.Microservice).where(  # try numbers count per step
        schema.StepAttempt.execution_id == execution_id, schema.StepAttempt.attempt == forest,
        schema.Microservice.name == "random_forest_regressor")

    def forest_is(status: StepStatus) -> None:
        with session_scope(settings) as session:
            attempt = session.scalars(forest_try).one()
            attempt.status, attempt.decision = status, Decision(action=TryAction.CANDIDATE).stored()

    def handed() -> list | None:
        try:
            return json.loads((ridge_out / RIVALS_FILE).read_text())
        except FileNotFoundError:
            return None

    forest_is(StepStatus.RUNNING)
    with session_scope(settings) as session:
        step_id = session.scalars(forest_try).one().step_id
        race = Race(execution_id, step_id, position, Workspace(workspace), service_names(session))
    with race.relayed_to(ridge, settings):
        time.sleep(2 * RELAY_SECONDS)
        assert handed() is None, "a pipe where the progress goes is no progress, and the relay is not stuck on it"
        (forest_out / PROGRESS_FILE).unlink()
        (forest_out / PROGRESS_FILE).write_text(json.dumps({"progress": [[0.4, 0.81]]}))
        grown = [{"name": "random_forest_regressor", "progress": [[0.4, 0.81]]}]
        wait_until(lambda: handed() == grown, timeout=30, what=lambda: f"the forest's progress, found {handed()}")
        (forest_out / PROGRESS_FILE).write_text(json.dumps({"progress": [[0.4, 0.81], [2.5, 0.97]]}))
        grown[0]["progress"].append([2.5, 0.97])
        wait_until(lambda: handed() == grown, timeout=30, what=lambda: f"the grown progress, found {handed()}")
        with session_scope(settings) as session:  # a later candidate's params: it is handed over as it grows
            assert race.rivals(session, running=False) == [] and race.rivals(session) == grown
        forest_is(StepStatus.FAILED)
        wait_until(lambda: handed() == [], timeout=30, what=lambda: f"a failed forest no rival, found {handed()}")


def test_rivals_are_handed_over_into_a_folder_its_service_controls_without_following_its_links(tmp_path):
    """The running candidate's code can leave anything in its output folder: a link where the file goes is replaced,
    not written through; a folder in its place leaves things as they are."""
    output, elsewhere = tmp_path / "attempt", tmp_path / "worker-file"
    output.mkdir()
    elsewhere.write_text("the worker's own")
    (output / RIVALS_FILE).symlink_to(elsewhere)
    rivals = [{"name": "ridge_regression", "progress": [[0.5, 0.9]]}]
    write_rivals(output, rivals)
    assert elsewhere.read_text() == "the worker's own"
    assert not (output / RIVALS_FILE).is_symlink() and json.loads((output / RIVALS_FILE).read_text()) == rivals
    (output / RIVALS_FILE).unlink()
    (output / RIVALS_FILE).mkdir()
    write_rivals(output, rivals)
    assert (output / RIVALS_FILE).is_dir() and [p.name for p in output.iterdir()] == [RIVALS_FILE]
    write_rivals(tmp_path / "gone", rivals)  # a try whose folder is not there yet races no one more


def test_a_rare_class_is_labelled_where_validation_draws_the_line_not_at_even_odds(store, embedder, tmp_path):
    rng = np.random.default_rng(8)
    n = 900
    frame = pd.DataFrame({"amount": rng.gamma(2.0, 40.0, n).round(2), "hour": rng.integers(0, 24, n),
                          "distance": rng.exponential(5.0, n).round(2)})
    risk = 0.02 * frame["amount"] + 0.15 * frame["distance"] - 6.0 + rng.normal(0, 1.2, n)
    frame["tipped"] = np.where(risk > np.quantile(risk, 0.93), "yes", "no")  # 7% yes; never likely at even odds
    path = tmp_path / "rides.csv"
    frame.to_csv(path, index=False)
    planned = plan(path, "predict whether a ride is tipped", settings=store, embedder=embedder).pipeline
    position = _search_exactly(store, planned, ["logistic_regression"], {})
    outcome = run_dag(store, planned.id, path)
    assert outcome["status"] == "completed", outcome["error"]
    line = outcome["trace"]["search"][str(position)]["threshold"]
    assert line is not None and 0 < line < 0.5
    bundle = Bundle.open(Workspace(Path(outcome["workspace"])).step_output(position))
    predicted = bundle.predictions()
    assert (predicted["prediction"] == "yes").any()
    assert ((predicted["proba_yes"] >= line) == (predicted["prediction"] == "yes")).all()
    assert bundle.metrics()["decision_threshold"] == round(line, 6)
    assert "Labels: a row is labelled 'yes' when its probability is at least" in (bundle.path / REPORT_FILE).read_text()


def test_a_candidate_ends_whole_while_its_rivals_are_handed_into_its_folder(tmp_path):
    """The relay may hand over the rivals' progress just as the try ends, while the worker takes back the folder its
    sandbox's user wrote: a file renamed away in the meantime is no failure of the candidate."""
    bundle = Bundle.create(tmp_path / "input", pd.DataFrame({"x": [1.0, 2.0]}), task_type="clustering")
    writes = "for n in range(3000):\n    open(f'/output/part-{n}', 'w').close()\n"
    stop = threading.Event()
    for run in range(3):
        output = tmp_path / f"attempt-{run}"
        output.mkdir()

        def relay(output: Path = output) -> None:
            while not stop.is_set():
                write_rivals(output, [{"name": "ridge_regression", "progress": [[0.5, 0.9]]}])

        stop.clear()
        relaying = threading.Thread(target=relay)
        relaying.start()
        try:
            result = LocalRuntime(warm=False).run(Invocation("writes_much", {"main.py": writes}, bundle.path, output,
                                                             {}, Limits(timeout_seconds=60, memory_mb=256)))
        finally:
            stop.set()
            relaying.join()
        assert result.ok, result.stderr
        assert len(list(output.glob("part-*"))) == 3000
