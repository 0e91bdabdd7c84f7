"""A goal naming several columns to predict is a question, unless the goal or the person asks for a model of each:
then planning builds one pipeline per target, alike but for the target, and says why there are several."""

from __future__ import annotations

import cProfile
import functools
import json
import os
import pstats
import pty
import re
import select
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from dagsmith.agents.choices import ChoiceError, check_choices, parse_choices
from dagsmith.agents.planner import plan, plan_each
from dagsmith.agents.profiler import profile_frame
from dagsmith.agents.intent.understanding import understand_targets
from dagsmith.execution.history import pipeline_rows
from dagsmith.models.catalog import Stage
from dagsmith.models.intent import ConstraintKind, SeveralTargets, find_constraint
from dagsmith.store import schema
from dagsmith.store.db import session_scope
import contextlib

#: "price" and "rooms" follow from the area, so a small table makes each model worth something.
GOAL = "predict the price and also the number of rooms"


def houses(n: int = 240) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    area = rng.uniform(40, 200, n).round(1)
    rooms = np.clip((area / 35 + rng.normal(0, 0.4, n)).round(), 1, 6).astype(int)
    return pd.DataFrame({"area": area, "age": rng.integers(1, 80, n), "rooms": rooms,
                         "price": (area * 2500 + rooms * 8000 + rng.normal(0, 15000, n)).round(0),
                         "city": rng.choice(["north", "south", "east"], n)})


@functools.cache
def profile():
    return profile_frame(houses())


@pytest.fixture(scope="module")
def houses_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("each-target") / "houses.csv"
    houses().to_csv(path, index=False)
    return path


@pytest.mark.parametrize("goal, asked", [
    ("predict price and rooms, one model each", "model each"),
    ("a separate model for each of price and rooms", "separate"),
    ("predict both price and rooms", "both"),
    ("predict price and rooms from the area, one pipeline per target", "per target"),
    ("train two models: price and rooms", "two models"),
    ("predict the price and the rooms, each with its own model", "own model"),
    # words that count the targets, not the rows
    ("predict price and rooms, a model for each", "each"),
    ("predict price and rooms for each of them", "each of"),
    ("predict price and rooms, both of them", "both"),
    ("predict price and rooms, one model each with a random forest", "model each"),
    ("separately predict price and rooms", "separately"),
    ("model price and rooms independently of each other", "independently"),
])
def test_a_goal_asking_for_a_model_of_each_target_reads_one_intent_per_target(goal, asked):
    intents = understand_targets(goal, profile())
    assert [i.target for i in intents] == ["price", "rooms"]
    for found in intents:
        each = find_constraint(found.constraints, ConstraintKind.EACH_TARGET)
        assert each.value == ["price", "rooms"]
        assert found.reasons["constraint.each_target"] == (
            f"the goal asks for a model of each of price, rooms ('{asked}'); one pipeline per target")
        assert found.reasons["target"].startswith(f"{found.target}: ")


def test_several_targets_without_the_request_stay_a_question_naming_each():
    for goal in (GOAL, "predict price and rooms for each city"):  # "each city" asks about the rows, not the models
        with pytest.raises(SeveralTargets) as raised:
            understand_targets(goal, profile())
        assert raised.value.columns == ["price", "rooms"] and raised.value.asked is None
        assert "Which one" in str(raised.value) and "'price' and 'rooms'" in str(raised.value)


@pytest.mark.parametrize("goal", [
    "predict price and rooms for each of the houses",
    "predict price and rooms for each one of the houses",
    "predict price and rooms in each of the three cities",
    "predict price and rooms for each row",
    "predict price and rooms per customer",
    "fit a model per customer to predict price and rooms",
    "predict price and rooms, one model per city",
    "predict price and rooms for both cities",
    "predict price and rooms for separate cities",
    "predict price and rooms, and show their errors separately",
    "predict price and rooms; impute missing entries independently",
])
def test_words_that_count_the_rows_ask_for_no_pipeline_per_target(goal):
    with pytest.raises(SeveralTargets) as raised:
        understand_targets(goal, profile())
    assert raised.value.columns == ["price", "rooms"] and raised.value.asked is None


def test_a_list_of_three_targets_is_three_pipelines_or_a_question_naming_all_three():
    intents = understand_targets("predict price, rooms and age separately", profile())
    assert [i.target for i in intents] == ["price", "rooms", "age"]
    with pytest.raises(SeveralTargets, match="'price', 'rooms' and 'age'"):
        understand_targets("predict price, rooms and age", profile())


def test_asking_for_each_target_plans_one_pipeline_per_target_or_the_one_there_is():
    intents = understand_targets(GOAL, profile(), each_target=True)
    assert [(i.task_type.value, i.target) for i in intents] == [("regression", "price"), ("regression", "rooms")]
    assert intents[0].reasons["constraint.each_target"] == (
        "a model of each target the goal names was asked for: price, rooms; one pipeline per target")
    [one] = understand_targets("predict the price", profile(), each_target=True)
    assert one.target == "price" and one.asks(ConstraintKind.EACH_TARGET) is None


def _reads(goal: str, **options) -> int:
    """How many times ``understand_targets`` read the goal with the rules: profiled, so the real code runs."""
    profiler = cProfile.Profile()
    with contextlib.suppress(SeveralTargets):
        profiler.runcall(understand_targets, goal, profile(), **options)
    return sum(calls[1] for (_, _, name), calls in pstats.Stats(profiler).stats.items() if name == "detect_intent")


def test_the_rules_read_a_goal_once_unless_each_target_is_read_on_its_own():
    assert _reads("predict the price") == 1  # the common path: one target
    assert _reads(GOAL) == 1  # several targets, not asked for: the rules' question is raised as it was read
    assert _reads(GOAL, each_target=True) == 3  # once to find the targets, then once with each one fixed


def test_planning_builds_and_stores_one_pipeline_per_target(store, embedder, houses_csv):
    goal = "predict price and rooms without the city column, one model each"
    plans = plan_each(houses_csv, goal, user="ana", settings=store, embedder=embedder)
    assert [p.intent.target for p in plans] == ["price", "rooms"]
    assert all(p.pipeline.valid and p.pipeline.id for p in plans)
    assert all(p.intent.goal == goal and p.intent.asks(ConstraintKind.EXCLUDE_COLUMNS) == ["city"] for p in plans)
    with session_scope(store) as session:
        rows = pipeline_rows(session, schema.Pipeline.owner == "ana")
    assert sorted((row["id"], row["target"]) for row in rows) == [(p.pipeline.id, p.intent.target) for p in plans]
    with pytest.raises(SeveralTargets):  # callers that take one pipeline get the question
        plan(houses_csv, goal, settings=store, embedder=embedder, save=False)


def test_a_choice_one_targets_pipeline_cannot_take_stores_no_pipeline(store, embedder, houses_csv):
    # the city's pipeline has only numbers to learn from, so no encoding stage; the price's encodes the city
    goal = "predict the price and the city, one model each"
    with pytest.raises(ChoiceError, match="this plan has no encoding stage to choose for"):
        plan_each(houses_csv, goal, user="cy", settings=store, embedder=embedder, choose=["encoding=onehot_encoder"])
    with session_scope(store) as session:  # the price's pipeline was built before the city's failed: not stored
        assert pipeline_rows(session, schema.Pipeline.owner == "cy") == []
    plans = plan_each(houses_csv, goal, user="cy", settings=store, embedder=embedder,
                      choose=["price: encoding=onehot_encoder"])
    assert [(p.intent.target, "store" in p.timings) for p in plans] == [("price", True), ("city", True)]


def _cli(settings, command, *args):
    env = {**os.environ, "DAGSMITH_DATABASE_URL": settings.database_url, "DAGSMITH_HOME": str(settings.home),
           "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "dagsmith.cli.app", command, *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=600)


def _plan(settings, *args):
    return _cli(settings, "plan", *args)


def test_the_plan_command_asks_or_builds_one_pipeline_per_target(store, houses_csv):
    asked = _plan(store, houses_csv, GOAL)
    assert asked.returncode != 0 and "'price' and 'rooms'" in asked.stderr and "--each-target" in asked.stderr
    built = _plan(store, houses_csv, GOAL, "--each-target", "--json")
    assert built.returncode == 0, built.stderr
    assert [p["intent"]["target"] for p in json.loads(built.stdout)] == ["price", "rooms"]
    shown = _plan(store, houses_csv, "predict both price and rooms")
    assert shown.returncode == 0, shown.stderr
    assert "Pipeline 1 of 2, target price" in shown.stdout and "Pipeline 2 of 2, target rooms" in shown.stdout
    assert "the goal asks for a model of each of price, rooms ('both')" in shown.stdout


def test_a_choice_aimed_at_one_target_chooses_for_its_pipeline_only():
    lines = ["scaling=robust_scaler", "rooms: modelling=knn_regressor", "price:modelling=ridge_regression"]
    assert parse_choices(lines, "rooms", ["price", "rooms"]) == {Stage.SCALING: "robust_scaler",
                                                                 Stage.MODELLING: "knn_regressor"}
    assert parse_choices(lines, "price", ["price", "rooms"])[Stage.MODELLING] == "ridge_regression"
    with pytest.raises(ChoiceError, match="'age: modelling=knn_regressor' chooses for the pipeline predicting 'age', "
                                          "but the pipelines built predict price, rooms"):
        parse_choices(["age: modelling=knn_regressor"], "price", ["price", "rooms"])
    assert parse_choices(["price: modelling=knn_regressor"], "price") == {Stage.MODELLING: "knn_regressor"}
    with pytest.raises(ChoiceError, match="but the pipeline built predicts price$"):  # one pipeline: its target
        parse_choices(["rooms: modelling=knn_regressor"], "price")
    with pytest.raises(ChoiceError, match="but the pipeline built predicts no column"):
        parse_choices(["rooms: modelling=knn_regressor"])


def test_choice_lines_are_checked_before_the_targets_are_known():
    check_choices(["", "modelling=ridge_regression", "age: scaling=robust_scaler"])  # any target: not known yet
    for line in ("modeling=ridge_regression", "price: ridge_regression", "price: modelling"):
        with pytest.raises(ChoiceError, match=f"a choice is \\[TARGET:\\] STAGE=MICROSERVICE .*; got '{line}'$"):
            check_choices(["scaling=robust_scaler", line])


def _step(plan: dict, stage: str) -> str:
    """The microservice a planned pipeline (as ``plan --json`` prints it) runs for the stage."""
    return next(step["microservice"] for step in plan["pipeline"]["steps"] if step["stage"] == stage)


def test_the_plan_command_aims_a_choice_at_one_targets_pipeline(store, houses_csv):
    built = _plan(store, houses_csv, GOAL, "--each-target", "--json", "--choose", "rooms: modelling=knn_regressor",
                  "--choose", "evaluation=regression_error_evaluator", "--choose", "price:modelling=ridge_regression")
    assert built.returncode == 0, built.stderr
    # the aimed choices go to their target's pipeline; the one without a target to every pipeline
    assert [(_step(p, "modelling"), _step(p, "evaluation")) for p in json.loads(built.stdout)] == [
        ("ridge_regression", "regression_error_evaluator"), ("knn_regressor", "regression_error_evaluator")]


@pytest.mark.parametrize("command", ["plan", "run"])
def test_a_choice_aimed_at_a_column_not_planned_names_the_targets_before_anything_is_built(store, houses_csv, command):
    wrong = _cli(store, command, houses_csv, GOAL, "--each-target", "--user", "bea",
                 "--choose", "age: modelling=knn_regressor")
    assert wrong.returncode == 2 and wrong.stdout == "" and "Traceback" not in wrong.stderr
    assert wrong.stderr.strip() == ("error: 'age: modelling=knn_regressor' chooses for the pipeline predicting 'age', "
                                    "but the pipelines built predict price, rooms")
    with session_scope(store) as session:  # checked before anything was built
        assert pipeline_rows(session, schema.Pipeline.owner == "bea") == []


def _answer(proc: subprocess.Popen, terminal: int) -> str:
    """The command's output, answering each question as it is asked: the second candidate for the pipeline predicting
    price, the last one for rooms'."""
    out = b""
    while select.select([proc.stdout], [], [], 600)[0]:
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            return out.decode()
        out += chunk
        if out.endswith(b"choose [1]: "):
            asked = out.decode()
            target = re.findall(r"^Pipeline predicting (\w+)$", asked, re.M)[-1]
            listed = re.findall(r"^  (\d)\. ", asked[asked.rindex("\n\n"):], re.M)
            os.write(terminal, b"2\n" if target == "price" else f"{listed[-1]}\n".encode())
    raise TimeoutError(f"the command said nothing for 10 minutes after: {out[-300:].decode(errors='replace')}")


def test_interactive_planning_asks_about_each_targets_pipeline_and_builds_its_own_choices(store, houses_csv, tmp_path):
    """With one pipeline per target, the questions come once per pipeline under its target's name, and each answer
    goes to the pipeline it was asked for."""
    leader, follower = pty.openpty()
    env = {**os.environ, "DAGSMITH_DATABASE_URL": store.database_url, "DAGSMITH_HOME": str(store.home),
           "COLUMNS": "200", "PYTHONUNBUFFERED": "1"}  # each question reaches the pipe as it is asked
    with (open(tmp_path / "stderr", "w+") as err,
          subprocess.Popen([sys.executable, "-m", "dagsmith.cli.app", "plan", str(houses_csv), GOAL, "--each-target",
                            "--interactive"], stdin=follower, stdout=subprocess.PIPE, stderr=err, env=env) as proc):
        os.close(follower)
        try:
            out = _answer(proc, leader)
        except BaseException:
            proc.kill()
            raise
        finally:
            os.close(leader)
        code = proc.wait()
        err.seek(0)
        assert code == 0, err.read()
    asking, built = out[:out.index("Pipeline 1 of 2")], out[out.index("Pipeline 1 of 2"):]
    trees = dict(zip(["price", "rooms"], built.split("Pipeline 2 of 2"), strict=True))
    picked = {}
    for part in asking.split("Pipeline predicting ")[1:]:  # one heading per pipeline, in the goal's order
        target = part.split(maxsplit=1)[0]
        questions = re.findall(r"^(\w+)\n((?:  \d\. .*\n)+)  choose", part, re.M)
        assert questions, part
        for stage, listed in questions:
            candidates = re.findall(r"^  \d\. (\S+)", listed, re.M)
            picked[target, stage] = candidates[1] if target == "price" else candidates[-1]
            assert re.search(rf"{stage} (best of )?{picked[target, stage]}\b", trees[target]), (target, stage)
    assert {target for target, _ in picked} == {"price", "rooms"}
    assert picked["price", "modelling"] != picked["rooms", "modelling"]  # each pipeline got its own answer
