"""The deterministic reading of a goal, composed from the parts: the goal read once, its task family scored, the
target chosen, then the constraints and stages that any reasoner's reading gets (``compose_intent``).
"""

from __future__ import annotations

import re

from dagsmith.agents.forecast_features import unknown_ahead
from dagsmith.agents.intent.calibration import Evidence, chance_right
from dagsmith.agents.intent.column_ranker import target_chances
from dagsmith.agents.intent.column_requests import column_constraints, excluded_columns, ruled_columns
from dagsmith.agents.intent.columns import NEVER_FEATURES, predictable
from dagsmith.agents.intent.constraints import parse_constraints
from dagsmith.agents.intent.lexicon import Family
from dagsmith.agents.intent.mentions import (
    MATCH_SCORE,
    STRONG_MATCH,
    MatchKind,
    column_matches,
    column_named,
    explicit_target,
    naming_words,
)
from dagsmith.agents.intent.reading import read_goal
from dagsmith.agents.intent.stage_rules import DataView, plan_stages
from dagsmith.agents.intent.target import (
    TargetChoice,
    focus_column,
    listed_target,
    qualifies,
    supervised_target,
    target_reason,
)
from dagsmith.agents.intent.task import (
    FAMILY_TASK,
    asks_other_kind,
    choose_family,
    family_evidence,
    family_scores,
    supervised_type,
    vague_goal_question,
)
from dagsmith.embeddings import Embedder
from dagsmith.models.catalog import TaskType
from dagsmith.models.intent import AmbiguousGoal, Constraint, ConstraintKind, Intent, Name
from dagsmith.models.profile import ColumnProfile, DatasetProfile
from dagsmith.text import words

#: Jinja expressions, statements and comments (Airflow's templates), closed or cut off at the end of the goal.
TEMPLATE_MARKUP = re.compile(r"\{\{.*?(?:\}\}|$)|\{%.*?(?:%\}|$)|\{#.*?(?:#\}|$)", re.DOTALL)


def detect_intent(goal: str, profile: DatasetProfile, *, target: str | None = None, each: Constraint | None = None,
                  embedder: Embedder | None = None) -> Intent:
    """Read the task, target, stages and constraints from the goal and the profile, with a reason for each, and the
    chance that the reading is right as its confidence (``calibration``).

    ``target`` is one of the columns a goal naming several targets asks a model of each of (``each``, their
    constraint): the goal is read as it is, with that column as what it predicts. ``embedder`` lets the column ranking
    that weighs the confidence compare the columns with the goal's words in meaning; without it none is close.
    """
    return read_with_evidence(goal, profile, target=target, each=each, embedder=embedder)[0]


def read_with_evidence(goal: str, profile: DatasetProfile, *, target: str | None = None,
                       each: Constraint | None = None, embedder: Embedder | None = None) -> tuple[Intent, Evidence]:
    """``detect_intent``'s reading and the evidence its confidence was calibrated from."""
    text = TEMPLATE_MARKUP.sub(" ", goal)  # template expressions are code, never words of the goal
    if not any(w.isalpha() for w in words(text)):
        markup = " It holds only template markup, which dagsmith never runs and which says no task." \
            if text != goal else ""
        raise AmbiguousGoal(vague_goal_question(goal, profile, markup))
    read = read_goal(text, profile)
    explicit, absent = explicit_target(text, profile)
    ruled = ruled_columns(text, profile)
    matches = [m for m in column_matches(read, profile) if m.column not in ruled] or column_matches(read, profile)
    masked = naming_words(matches)
    named = bool(explicit or absent) or any(m.score >= STRONG_MATCH and not read.among_inputs(m.start) for m in matches)
    scores = family_scores(read, masked, named, named_inputs=any(read.among_inputs(m.start) for m in matches))
    family, task_words, task_margin = choose_family(scores, named, goal, profile)

    reasons = {}
    if read.corrections:
        reasons["spelling"] = "read " + ", ".join(f"'{a}' as '{b}'" for a, b in read.corrections)
    focus = None
    if family is Family.SUPERVISED:
        choice = listed_target(target, matches) if target else supervised_target(read, explicit, absent, matches,
                                                                                  profile)
        task, why = supervised_type(read, profile, choice.column)
    else:
        choice = TargetChoice(None, 1.0, "none: an unsupervised task works on all the columns")
        task, why = FAMILY_TASK[family], "nothing to predict"
        focus = focus_column(read, matches) if family is Family.EXPLORATION else None
    reasons["target"] = choice.reason
    reasons["task_type"] = f"{task.value.replace('_', ' ')}: {family_evidence(scores, family)}; {why}"
    asked = Name(kind=ConstraintKind.FOCUS, value=focus.column,
                       reason=f"the goal asks what goes with {target_reason(focus)}") if focus else None
    # a column no model could predict (one value, an identifier) is no rival, however surely it is named; nor is
    # one whose words only qualify the target's ("health insurance")
    chosen = [m for m in matches if m.column == choice.column]
    rival = any(m.column != choice.column and m.score >= choice.confidence and not read.among_inputs(m.start)
                and predictable(profile.column(m.column)) and not any(qualifies(m, c, read.stems) for c in chosen)
                for m in matches) if choice.column else False
    if not choice.column:
        ranked = 1.0
    elif choice.confidence <= MATCH_SCORE[MatchKind.PROFILE]:
        # the ranking says which column a prediction is of, not that the goal asks for one: a target the goal's words
        # do not name (the profile's favourite) gains nothing from being the likeliest of the columns
        ranked = 0.0
    else:
        ranked = target_chances(text, profile, embedder).get(choice.column, 0.0)
    evidence = Evidence(family is Family.SUPERVISED, task_words, task_margin, choice.confidence, rival,
                        asks_other_kind(read, task), ranked)
    return compose_intent(goal, profile, task, choice.column, reasons, chance_right(evidence),
                          added=[c for c in (asked, each) if c]), evidence


def compose_intent(goal: str, profile: DatasetProfile, task: TaskType, target: str | None, reasons: dict[str, str],
                   confidence: float, *, added: list[Constraint] | None = None,
                   stated: list[Constraint] | None = None) -> Intent:
    """The intent for a reading of the goal (by any reasoner): its constraints and the stages the data needs;
    ``added`` are constraints the reading adds (the column an exploration relates the others to, the targets the goal
    asks a model of each of); ``stated`` are those given as fields, which replace the words' of the same kind
    (columns left out add up)."""
    reasons = dict(reasons)
    replaced = {c.kind for c in stated or []} - {ConstraintKind.EXCLUDE_COLUMNS}
    constraints = [c for c in parse_constraints(goal, task) + (added or [])
                   + column_constraints(goal, lambda phrase: column_named(phrase, profile))
                   if c.kind not in replaced] + (stated or [])
    excluded = set(excluded_columns(constraints, profile.column_names, {target}))
    features = [c for c in _features(profile, target, task) if c.name not in excluded]
    if task is TaskType.TIME_SERIES_FORECASTING and (ahead := unknown_ahead(features, target, constraints)):
        constraints.append(ahead)
        features = [c for c in features if c.name not in ahead.value]
    for c in constraints:
        several = c.kind in {ConstraintKind.EXCLUDE_FAMILY, ConstraintKind.METRIC}  # one reason per value
        key = f"constraint.{c.kind}" + (f".{c.value}" if several else "")
        reasons[key] = f"{reasons[key]}; {c.reason}" if key in reasons else c.reason
    view = DataView(profile, task, profile.column(target) if target else None, features, constraints)
    required, optional, stage_reasons = plan_stages(view)
    return Intent(
        goal=goal, task_type=task, target=target, required_stages=required, optional_stages=optional,
        constraints=constraints, reasons={**reasons, **stage_reasons}, confidence=round(confidence, 3),
    )


def _features(profile: DatasetProfile, target: str | None, task: TaskType) -> list[ColumnProfile]:
    skip = {target, profile.time_column if task is TaskType.TIME_SERIES_FORECASTING else None}
    return [c for c in profile.columns if c.name not in skip and c.semantic_type not in NEVER_FEATURES]
