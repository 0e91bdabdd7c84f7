"""Agent A2's entry point: the goal read by the configured language model when its reading holds up, else by
the deterministic rules of ``agents.intent``.

The model reads only the task type and the target; constraints and stages come from the same rules the
deterministic reasoner uses, so both readings are planned alike. The reading must make sense for the data
(the target exists, its type fits the task, enough rows: ``validate_intent``), or it is not used.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager

from pydantic import BaseModel, Field

from dagsmith.agents.intent.column_meaning import read_by_meaning
from dagsmith.agents.intent.column_ranker import target_chances
from dagsmith.agents.intent.task_meaning import task_by_meaning
from dagsmith.agents.intent import (
    absent_column_names,
    apply_fields,
    compose_intent,
    detect_intent,
    explicit_target,
    fields_intent,
    missing_column_message,
    read_goal,
    supervised_type,
    validate_intent,
)
from dagsmith.agents.intent.calibration import calibration
from dagsmith.agents.intent.candidates import OFFERED, likely_readings
from dagsmith.agents.intent.given import FieldError, check_fields
from dagsmith.agents.intent.mentions import STRONG_MATCH, column_matches
from dagsmith.embeddings import Embedder, default_embedder
from dagsmith.models.catalog import TaskType
from dagsmith.models.intent import (
    AmbiguousGoal,
    ConstraintKind,
    GivenFields,
    Intent,
    InvalidIntent,
    Names,
    Question,
    Reading,
    SeveralTargets,
)
from dagsmith.models.profile import DatasetProfile
from dagsmith.models.reasoning import DETERMINISTIC, Provenance
from dagsmith.reasoning.llm import ModelReasoner, ReasonerFailed, decide

#: Example values shown per column: enough to recognise classes, never more than a small sample of the data.
SAMPLE_VALUES = 5
#: Longest goal read: a request in plain language, not a document.
MAX_GOAL_CHARS = 2000
#: Embeddings and overrides that reorder how text displays: a goal shown in logs and DAG docs must read as stored.
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
#: Columns described in the prompt; wider tables are cut (the prompt must stay bounded).
MAX_COLUMNS = 200

QUESTION = (
    "A user wants a machine-learning pipeline on a table. From the user's goal and the table's columns, decide the "
    "task type and, for a prediction task, the target column: the one whose values the user wants predicted. "
    "Use the column's exact name. For clustering, dimensionality reduction, anomaly detection or exploratory "
    "analysis the target is null. Binary classification needs a target with two classes; regression a numeric "
    "one. Give a short reason for each choice and your confidence between 0 and 1.")


class IntentReading(BaseModel):
    """What the model answers: the contract its JSON must fit."""

    task_type: TaskType
    target: str | None = Field(description="exact column name, or null for an unsupervised task")
    task_type_reason: str
    target_reason: str
    confidence: float = Field(ge=0.0, le=1.0)


def columns_summary(profile: DatasetProfile) -> str:
    """One JSON line per column: name, kind, cardinality and a few example values (no whole rows)."""
    return "\n".join(json.dumps({"name": c.name, "type": c.semantic_type.value, "distinct": c.unique,
                                 "missing": c.missing,
                                 "examples": [str(v.value)[:40] for v in c.top_values[:SAMPLE_VALUES]]})
                     for c in profile.columns[:MAX_COLUMNS])


def read_intent(reasoner: ModelReasoner, goal: str, profile: DatasetProfile) -> tuple[Intent, Provenance]:
    """The model's reading of the goal as a validated intent; raises ``ReasonerFailed`` when it makes no sense."""
    reading, provenance = reasoner.ask("intent", QUESTION, {"goal": goal, "columns": columns_summary(profile)},
                                       IntentReading)
    target = reading.target if reading.task_type.supervised else None
    if reading.task_type.supervised:
        if not target:
            raise ReasonerFailed(f"{reasoner.name} chose {reading.task_type.value} without a target", provenance)
        if target not in profile.column_names:
            raise ReasonerFailed(f"{reasoner.name} chose the target '{target}', which is not a column", provenance)
    reasons = {"task_type": f"{reading.task_type.value.replace('_', ' ')}: {reading.task_type_reason}",
               "target": f"{target}: {reading.target_reason}" if target else "none: an unsupervised task"}
    intent = validate_intent(compose_intent(goal, profile, reading.task_type, target, reasons, reading.confidence),
                             profile)
    if intent.errors:
        raise ReasonerFailed(f"{reasoner.name}'s reading cannot be planned: "
                             + " ".join(issue.message for issue in intent.errors), provenance)
    return intent, provenance


def check_goal(goal: str) -> None:
    """Refuse goals no reading can help: too long to be a request, or holding control characters or bidirectional
    overrides (a pasted binary, or text meant to confuse logs and the store), before any reasoner sees them. A
    refusal, not a question: nothing to offer in their place."""
    if len(goal) > MAX_GOAL_CHARS:
        raise Question(f"the goal is {len(goal):,} characters long; say what you want in at most "
                            f"{MAX_GOAL_CHARS:,}, e.g. \"predict which customers will churn\"")
    if any(unicodedata.category(c) == "Cc" and c not in "\t\n\r" for c in goal):
        raise Question("the goal holds control characters (such as NUL); write it as plain text")
    if any(c in BIDI_CONTROLS for c in goal):
        raise Question("the goal holds bidirectional text controls (such as U+202E), which make it display "
                            "differently from what it says; write it as plain text")


def check_column_names(goal: str, profile: DatasetProfile, target: str | None) -> None:
    """Refuse a reading of a goal that writes a column's name (``colour_of_the_moon``) the table lacks, with the
    closest columns, unless the reading's ``target`` is named outright elsewhere in the goal: the writer meant that
    name exactly, and planning on a column that merely resembles it answers another question. A name designated as
    the target ("the column 'x'") is validation's to report, as any absent target is."""
    designated = explicit_target(goal, profile)[1]
    absent = [name for name in absent_column_names(goal, profile) if name != designated]
    if not absent or target and any(m.column == target and m.score >= STRONG_MATCH
                                    for m in column_matches(read_goal(goal, profile), profile)):
        return
    raise AmbiguousGoal(" ".join(missing_column_message(name, profile) for name in absent)
                        + " Name the column you mean as the table spells it.")


def _checked_goal(goal: str | None, profile: DatasetProfile, given: GivenFields) -> str:
    """The goal as said (or in words for what ``given`` settles), refused with the fields before any reading: a goal
    that cannot be read, or a field that names no column, stops here."""
    goal = given.goal_for(goal)
    check_goal(goal)
    if given != GivenFields():
        check_fields(goal, given, profile)
    return goal


def understand(goal: str, profile: DatasetProfile, reasoner: ModelReasoner | None = None,
               embedder: Embedder | None = None, *, ruled: Intent | AmbiguousGoal | None = None,
               given: GivenFields | None = None, proceed: float | None = None) -> Intent:
    """Read and validate the goal; raises AmbiguousGoal (unreadable goal, or a reading of the rules less likely to be
    right than ``proceed``, by default the calibrated threshold) or InvalidIntent (cannot be planned).

    A target the goal names in words no column is called by is looked for by meaning (``embedder``, by default the
    shipped model, loaded only then). ``ruled`` is the rules' reading of this goal (or the question they raised) when
    the caller has it already, so the goal is not read twice. ``given`` are fields stated outright (``--target``,
    ...): each wins over the reading; a target (or a task that predicts nothing) given leaves no reader to ask.
    """
    given = given or GivenFields()
    goal = _checked_goal(goal, profile, given)
    if given.settles:
        return fields_intent(goal, profile, given)
    with offering_readings(goal, profile, embedder):
        return _read(goal, profile, reasoner, embedder, ruled, given, proceed)


def _read(goal: str, profile: DatasetProfile, reasoner: ModelReasoner | None, embedder: Embedder | None,
          ruled: Intent | AmbiguousGoal | None, given: GivenFields, proceed: float | None) -> Intent:
    """``understand``'s reading of a goal already checked, inside the caller's ``offering_readings``."""
    intent, provenance = decide(reasoner, lambda model: read_intent(model, goal, profile),
                                lambda: validate_intent(_by_rules(goal, profile, ruled, embedder), profile))
    check_column_names(goal, profile, intent.target)
    if {issue.code for issue in intent.errors} == {"target_missing"}:
        intent = _target_by_meaning(intent, profile, embedder or default_embedder())
    intent = intent.model_copy(update={"provenance": provenance})
    if {issue.code for issue in intent.errors} == {"target_missing"} and \
            intent.target != explicit_target(goal, profile)[1]:
        # a word no column is called by ("predict the wingspan"): which column the person means is theirs to say,
        # with the likeliest readings, where a name designated outright stays an error
        raise AmbiguousGoal(" ".join(issue.message for issue in intent.errors))
    if intent.errors:
        raise InvalidIntent(intent)
    if provenance.reasoner == DETERMINISTIC and intent.confidence < (
            calibration().proceed if proceed is None else proceed):
        raise unsure(intent)
    return intent if given == GivenFields() else apply_fields(intent, profile, given)


def unsure(intent: Intent) -> AmbiguousGoal:
    """The question for a reading of the rules too unlikely to be right to plan on: the reading is offered first."""
    what = intent.task_type.value.replace("_", " ") + (f" of '{intent.target}'" if intent.target else "")
    return AmbiguousGoal(
        f"The goal most likely asks for {what}, but readings on evidence like this are right only about "
        f"{intent.confidence:.0%} of the time, so dagsmith asks rather than guesses. Which do you mean?",
        [Reading(task_type=intent.task_type, target=intent.target,
                 evidence=intent.reasons.get("target") if intent.target else intent.reasons["task_type"])])


def understand_targets(goal: str, profile: DatasetProfile, reasoner: ModelReasoner | None = None,
                       embedder: Embedder | None = None, *, each_target: bool = False,
                       given: GivenFields | None = None) -> list[Intent]:
    """The goal's intent; or, when it names several columns to predict and asks for a model of each (or
    ``each_target`` asks for it), one intent per target: the same goal and constraints, the target fixed in each.

    Whether several targets are named is the rules' reading, whichever reasoner is configured: a model reads one
    target, and an explicit request for each must not be narrowed to one. Several targets without the request stay
    the question (``SeveralTargets``). ``given`` fields win over the reading of each (``understand``).
    """
    given = given or GivenFields()
    goal = _checked_goal(goal, profile, given)
    if given.settles:
        if each_target and given.target:
            raise FieldError("--target names the one column to predict, and --each-target asks for one pipeline per "
                             "target the goal names: pass one")
        return [fields_intent(goal, profile, given)]
    with offering_readings(goal, profile, embedder):
        try:
            ruled: Intent | AmbiguousGoal = detect_intent(goal, profile, embedder=embedder or default_embedder())
        except AmbiguousGoal as question:
            ruled = question
        several = ruled if isinstance(ruled, SeveralTargets) else None
        if several is None or not (several.asked or each_target):
            return [_read(goal, profile, reasoner, embedder, ruled, given, None)]
        listed = ", ".join(several.columns)
        why = (f"the goal asks for a model of each of {listed} ('{several.asked}')" if several.asked
               else f"a model of each target the goal names was asked for: {listed}")
        each = Names(kind=ConstraintKind.EACH_TARGET, value=several.columns,
                          reason=f"{why}; one pipeline per target")
        intents = [validate_intent(detect_intent(goal, profile, target=column, each=each), profile)
                   for column in several.columns]
        for intent in intents:
            if intent.errors:
                raise InvalidIntent(intent)
        return intents if given == GivenFields() else [apply_fields(intent, profile, given) for intent in intents]


@contextmanager
def offering_readings(goal: str, profile: DatasetProfile, embedder: Embedder | None = None) -> Iterator[None]:
    """A question raised inside offers the goal's likeliest readings (``candidates``) after those it brings;
    columns close in meaning to the goal's words (by ``embedder``, the shipped model by default) among them."""
    try:
        yield
    except Question as question:
        if len(question.candidates) < OFFERED:
            embedder = embedder or default_embedder()
            found = read_by_meaning(goal, profile, embedder)
            meant = [(m.column, f"{m.column}: closest in meaning to the goal's '{m.phrase}' ({m.similarity:.2f})")
                     for m in (found.close if found else [])]
            offered = {(r.task_type, r.target) for r in question.candidates}
            likely = likely_readings(goal, profile, meant, task_meant=task_by_meaning(goal, embedder, min_lead=0.0),
                                     chances=target_chances(goal, profile, embedder))
            question.candidates += [r for r in likely
                                    if (r.task_type, r.target) not in offered][: OFFERED - len(question.candidates)]
        raise


def _by_rules(goal: str, profile: DatasetProfile, ruled: Intent | AmbiguousGoal | None,
              embedder: Embedder | None) -> Intent:
    """The rules' reading of the goal: ``ruled`` when the caller read it already (its question raised), else read,
    its confidence weighing the target's lead in meaning (``embedder``, by default the shipped model)."""
    if isinstance(ruled, AmbiguousGoal):
        raise ruled
    return detect_intent(goal, profile, embedder=embedder or default_embedder()) if ruled is None else ruled


def _target_by_meaning(intent: Intent, profile: DatasetProfile, embedder: Embedder) -> Intent:
    """The intent with the one column the goal means as its target; or its error naming the close ones. A column the
    goal designates by name ("the column 'x'") is never swapped for another."""
    if explicit_target(intent.goal, profile)[1]:
        return intent
    found = read_by_meaning(intent.goal, profile, embedder)
    if found is None:
        return intent
    if not found.clear:
        close = "; ".join(str(meaning) for meaning in found.close[:3])
        issues = [issue.model_copy(update={"message": f"{issue.message} Closest in meaning to the goal's words: "
                                                      f"{close}. Name the column to predict."})
                  if issue.code == "target_missing" else issue for issue in intent.issues]
        return intent.model_copy(update={"issues": issues})
    target = found.close[0].column
    task, why = supervised_type(read_goal(intent.goal, profile), profile, target)
    reasons = {**intent.reasons, "target": f"{target}: {found.reason}",
               "task_type": f"{task.value.replace('_', ' ')}: {why}"}
    return validate_intent(compose_intent(intent.goal, profile, task, target, reasons, intent.confidence), profile)
