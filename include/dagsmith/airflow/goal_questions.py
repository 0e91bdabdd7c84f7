"""A goal the reader is unsure of, asked in Airflow instead of failing the build run.

The meta-DAG's ``plan`` task hands an unclear goal's question on as XComs: the question's text (``QUESTION_KEY``),
its candidate readings (``CANDIDATES_KEY``) and the options a person picks from, one per reading plus ``ANOTHER``.
The ``clarify`` task (Airflow's human-in-the-loop operator, mapped over zero or one question that ``ask`` returns,
so it is skipped when the goal was clear) shows them in the UI's Required Actions and through the REST API, with
free entry for a target and a task; ``understood`` reads the goal again with the chosen reading as given fields, and
remembers the answer for the goal's words on a table of these columns. Nobody answering in time fails the run; a
run made in-process, which nobody logged in to answer, fails with the question at once.
"""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

from airflow.sdk import Param

from dagsmith.models.catalog import TaskType
from dagsmith.models.airflow import QUESTION_XCOM
from dagsmith.models.intent import AmbiguousGoal, GivenFields, Reading

INTENTS_KEY, QUESTION_KEY, CANDIDATES_KEY, OPTIONS_KEY = "intents", QUESTION_XCOM, "candidates", "options"
#: The option that takes the target and task typed into the form instead of one of the readings.
ANOTHER = "Another reading: the target and task given below"
#: How long a build run waits for a person to answer a question about its goal.
QUESTION_TIMEOUT = timedelta(seconds=int(os.environ.get("DAGSMITH_QUESTION_TIMEOUT_SECONDS", 1800)))
#: The form's free entry, for a reading none of the options offers.
ENTRY = {"target": Param(None, type=["null", "string"], description="The column to predict (with the last option)."),
         "task": Param(None, type=["null", "string"], enum=[None, *(t.value for t in TaskType)],
                       description="The task (with the last option).")}


def asked(question: AmbiguousGoal) -> dict[str, Any]:
    """The plan task's outputs for a goal it asks about: no intents yet, the question and its readings."""
    candidates = [c.model_dump(mode="json") for c in question.candidates]
    return {INTENTS_KEY: [], QUESTION_KEY: body(question), CANDIDATES_KEY: candidates,
            OPTIONS_KEY: [[*(label(i, c) for i, c in enumerate(question.candidates, 1)), ANOTHER]]}


def clear(intents: list[dict]) -> dict[str, Any]:
    """The plan task's outputs for a goal read with confidence: nothing to ask."""
    return {INTENTS_KEY: intents, QUESTION_KEY: "", CANDIDATES_KEY: [], OPTIONS_KEY: []}


def label(rank: int, reading: Reading) -> str:
    """A reading as an option of the form: short, and unique by its rank."""
    what = reading.task_type.value.replace("_", " ")
    return f"{rank}. {what} of {reading.target}" if reading.target else f"{rank}. {what}"


def body(question: AmbiguousGoal) -> str:
    """The form's text: the question, then each reading with its evidence."""
    lines = [str(question), "", "Likely readings:"]
    lines += [f"- **{label(i, c)}**: {c.evidence}" for i, c in enumerate(question.candidates, 1)]
    return "\n".join(lines)


def answer_fields(answer: dict[str, Any], candidates: list[dict]) -> GivenFields:
    """The fields a person's answer chooses: the picked reading's target and task, or those typed in."""
    picked = (answer.get("chosen_options") or [ANOTHER])[0]
    if picked != ANOTHER:
        rank = int(picked.split(".", 1)[0])
        return Reading.model_validate(candidates[rank - 1]).fields
    typed = answer.get("params_input") or {}
    return GivenFields.model_validate({k: typed[k] for k in ("target", "task") if typed.get(k)})
