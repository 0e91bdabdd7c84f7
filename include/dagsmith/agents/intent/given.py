"""Fields a person or an upstream system states instead of hoping the goal's words are read right (``GivenFields``:
the target, the task, the metric, columns to leave out, a time budget, a forecast's horizon). A field given wins over
the words; the words still give the rest. A field that cannot be used (a target that is no column or does not fit the
task, a metric the task is not judged by, a horizon for what is no forecast) is an error naming what would fit, never
a guess.
"""

from __future__ import annotations

import difflib

from dagsmith.agents.intent.constraints import METRICS_FOR
from dagsmith.agents.intent.detect import compose_intent
from dagsmith.agents.intent.reading import read_goal
from dagsmith.agents.intent.task import supervised_type
from dagsmith.agents.intent.validation import missing_column_message, type_issues, validate_intent
from dagsmith.agents.intent.wording import shortlist
from dagsmith.errors import InputError
from dagsmith.models.catalog import TaskType
from dagsmith.models.intent import (
    Constraint,
    ConstraintKind,
    Count,
    GivenFields,
    Horizon,
    Intent,
    InvalidIntent,
    Name,
    Names,
)
from dagsmith.models.profile import DatasetProfile

#: Every metric a task is judged by, as ``--metric`` takes it.
KNOWN_METRICS = sorted(set().union(*METRICS_FOR.values()))
#: Errors that say a target does not fit the task: the message then names the columns that would.
MISFIT_CODES = {"target_unusable", "target_not_numeric", "single_class", "target_not_categorical", "not_binary"}
#: The reading's own reasons, kept when fields change what the rest is composed from.
READING_REASONS = ("spelling", "target", "task_type")


class FieldError(InputError, ValueError):
    """A given field cannot be used as it is; the message names what would fit."""


def _task_name(task: TaskType) -> str:
    return task.value.replace("_", " ")


def stated_constraints(given: GivenFields) -> list[Constraint]:
    """The constraints the fields state, each saying it was given."""
    found = []
    if given.metric:
        found.append(Name(kind=ConstraintKind.METRIC, value=given.metric,
                                reason=f"metric given: --metric {given.metric}"))
    if given.time_budget:
        found.append(Count(kind=ConstraintKind.TIME_BUDGET, value=given.time_budget,
                                reason=f"time budget given: --time-budget {given.time_budget}"))
    if given.exclude:
        columns = list(dict.fromkeys(given.exclude))
        found.append(Names(kind=ConstraintKind.EXCLUDE_COLUMNS, value=columns,
                                reason="columns given to leave out: " + ", ".join(f"--exclude {c}" for c in columns)))
    if given.horizon:
        found.append(Horizon.given(given.horizon))
    return found


def check_fields(goal: str, given: GivenFields, profile: DatasetProfile) -> None:
    """Refuse fields that name no column or no metric, or contradict each other, before anything is read."""
    if not goal.strip():
        raise FieldError("say what you want in a goal, or give --target COLUMN (or a --task that predicts nothing, "
                         "such as clustering)")
    named = ([("--target", given.target)] if given.target else []) + [("--exclude", c) for c in given.exclude]
    for option, name in named:
        if profile.column(name) is None:
            raise FieldError(f"{option} {name}: {missing_column_message(name, profile)}")
    if given.target and given.target in given.exclude:
        raise FieldError(f"--exclude leaves out '{given.target}', the column --target asks to predict: drop one")
    if given.target and given.task and not given.task.supervised:
        raise FieldError(f"--task {given.task.value} predicts no column, and --target names one to predict: drop "
                         "--target, or give a task that predicts a column")
    if given.metric and given.metric not in KNOWN_METRICS:
        raise FieldError(f"--metric {given.metric} is no metric dagsmith knows; use one of {', '.join(KNOWN_METRICS)}")


def fields_intent(goal: str, profile: DatasetProfile, given: GivenFields) -> Intent:
    """The intent when the fields settle what to do (``given.settles``): the target and task as given, the task from
    the target (and the goal's words) when only the target is; the goal's words give the constraints and stages."""
    check_fields(goal, given, profile)
    reasons = {}
    if given.target:
        reasons["target"] = f"target given: --target {given.target}"
        task, why = (given.task, f"task given: --task {given.task.value}") if given.task else \
            supervised_type(read_goal(goal, profile), profile, given.target)
        reasons["task_type"] = why if given.task else f"{_task_name(task)}: {why}"
    else:
        task = given.task
        reasons["target"] = "none: an unsupervised task works on all the columns"
        reasons["task_type"] = f"task given: --task {task.value}"
    return _checked(compose_intent(goal, profile, task, given.target, reasons, 1.0, stated=stated_constraints(given)),
                    profile, given)


def apply_fields(intent: Intent, profile: DatasetProfile, given: GivenFields) -> Intent:
    """A reading of the goal with the fields given in place of what the words said; the words give the rest."""
    check_fields(intent.goal, given, profile)
    task = given.task or intent.task_type
    if task.supervised and not intent.target:
        raise FieldError(f"--task {task.value} predicts a column, and the goal names none to predict: give --target "
                         "COLUMN")
    reasons = {key: intent.reasons[key] for key in READING_REASONS if key in intent.reasons}
    if given.task:
        reasons["task_type"] = f"task given: --task {given.task.value}"
    if not task.supervised:
        reasons["target"] = "none: an unsupervised task works on all the columns"
    kept = [c for c in intent.constraints if c.kind in {ConstraintKind.FOCUS, ConstraintKind.EACH_TARGET}]
    composed = compose_intent(intent.goal, profile, task, intent.target if task.supervised else None, reasons,
                              intent.confidence, added=kept, stated=stated_constraints(given))
    return _checked(composed, profile, given).model_copy(update={"provenance": intent.provenance})


def _checked(intent: Intent, profile: DatasetProfile, given: GivenFields) -> Intent:
    """The intent validated against the data; a given target that does not fit the task, or a metric the task is not
    judged by, is an error naming what would."""
    intent = validate_intent(intent, profile)
    if intent.errors:
        if given.target:
            issues = [issue.model_copy(update={"message": f"--target {given.target}: {issue.message}"
                                                          + _fitting(intent.task_type, given.target, profile)})
                      if issue.code in MISFIT_CODES else issue for issue in intent.issues]
            intent = intent.model_copy(update={"issues": issues})
        raise InvalidIntent(intent)
    if given.horizon and intent.task_type is not TaskType.TIME_SERIES_FORECASTING:
        raise FieldError(f"--horizon {given.horizon} says how far ahead a forecast looks, and this is "
                         f"{_task_name(intent.task_type)}: give --task {TaskType.TIME_SERIES_FORECASTING.value}, or "
                         "drop --horizon")
    fits = METRICS_FOR.get(intent.task_type, set())
    if given.metric and given.metric not in fits:
        task = _task_name(intent.task_type)
        raise FieldError(f"--metric {given.metric} does not fit {task}; "
                         + (f"use one of {', '.join(sorted(fits))}" if fits else f"{task} is judged by no metric"))
    return intent


def _fitting(task: TaskType, target: str, profile: DatasetProfile) -> str:
    """The columns that would fit the task, closest in name to the given target first."""
    fit = [c.name for c in profile.columns if c.name != target and c.count and not type_issues(task, c)]
    if not fit:
        return f" No column fits {_task_name(task)}."
    fit.sort(key=lambda name: -difflib.SequenceMatcher(None, target.lower(), name.lower()).ratio())
    return f" Columns that fit {_task_name(task)}, closest first: {shortlist(fit, 3)}."
