"""The readings a question about a goal offers: what the goal most likely asks, ranked, each with its evidence.

A question is only useful when the right answer is among the few it offers. The candidates come from the same
evidence the reading weighs, in the order it trusts them: the columns the goal names (best mentions first), columns
spelled like a name the goal writes that the table lacks, columns close in meaning to the goal's words (when the
caller has them), then the profile's target candidates; each with the task its values call for. Columns named among
the inputs, or in a list of several columns ("visit, treatment and baseline"), come last, and a column the goal rules
in or out as a feature ("without the id", "only from age") is never offered. A task family the goal's words ask for
without a column (grouping rows, finding unusual ones) is offered too, ahead of the columns when its words outweigh
the prediction's. The kind of task the goal's meaning clearly names (when the caller has it) comes first: an
unsupervised one as itself, a forecast as forecasts of the columns; an unsupervised one it only leans to takes the
last place of a question that would otherwise offer predictions only (a goal its words read as a prediction may mean
none). Where the likeliest target's values allow two tasks and no word chooses (a rating of 1 to 5: classes or an
amount; a number on rows ordered in time: predicted or forecast), both are offered.
"""

from __future__ import annotations

from collections.abc import Iterable

from dagsmith.agents.intent.column_requests import ruled_columns
from dagsmith.agents.intent.columns import UNPREDICTABLE
from dagsmith.agents.intent.lexicon import Family
from dagsmith.agents.intent.mentions import (
    MatchKind,
    absent_column_names,
    column_lists,
    column_matches,
    explicit_target,
    naming_words,
)
from dagsmith.agents.intent.reading import read_goal
from dagsmith.agents.intent.target import target_reason
from dagsmith.agents.intent.task_meaning import MIN_LEAD, TaskMeaning
from dagsmith.agents.intent.task import (
    FAMILY_TASK,
    family_evidence,
    family_scores,
    family_totals,
    forecastable,
    other_task,
    supervised_type,
)
from dagsmith.agents.intent.validation import closest_columns
from dagsmith.models.catalog import TaskType
from dagsmith.models.intent import Reading
from dagsmith.models.profile import DatasetProfile

#: How many readings a question offers.
OFFERED = 3


def likely_readings(goal: str, profile: DatasetProfile, meant: Iterable[tuple[str, str]] = (),
                    limit: int = OFFERED, task_meant: TaskMeaning | None = None,
                    chances: dict[str, float] | None = None) -> list[Reading]:
    """Up to ``limit`` readings of ``goal``, likeliest first, each a different task and target. ``meant`` are columns
    close in meaning to the goal's words, closest first, each with the evidence for it; ``task_meant`` the kind of
    task the goal's meaning names or leans to; ``chances`` each column's chance of being the target
    (``column_ranker``), which orders the columns when given."""
    read = read_goal(goal, profile)
    matches = sorted(column_matches(read, profile), key=lambda m: (-m.score, m.start))
    mentioned = [m for m in matches if m.kind is not MatchKind.FUZZY or len(matches) == 1]
    spans = column_lists(matches, read)
    listed = [m for m in mentioned if any(m.start in span for span in spans)]
    inputs = [m for m in mentioned if read.among_inputs(m.start) or m in listed]
    named = [(m.column, target_reason(m)) for m in mentioned if m not in inputs]
    explicit, designated = explicit_target(goal, profile)
    if explicit:
        named.insert(0, (explicit.column, target_reason(explicit)))
    for absent in ([designated] if designated else []) + absent_column_names(goal, profile):
        named += [(column, f"{column}: spelled most like '{absent}', which is not a column")
                  for column in closest_columns(absent, profile)]
    # a column named only in a list is close in meaning for being listed, and no less an input for it
    fed = {m.column for m in listed} - {column for column, _ in named}
    named += [(column, why) for column, why in meant if column not in fed]
    named += [(c.column, f"{c.column}: the profile's target candidate ({'; '.join(c.reasons[:2])})")
              for c in profile.target_candidates if c.column not in fed]
    named += [(m.column, target_reason(m)) for m in inputs]
    if chances:
        named = _ranked(named, chances, explicit.column if explicit else None)
    ruled = ruled_columns(goal, profile)
    clear = task_meant is not None and task_meant.lead >= MIN_LEAD  # else the meaning only leans to that kind

    supervised: list[Reading] = []
    for column, evidence in named:
        found = profile.column(column)
        if found is None or found.semantic_type in UNPREDICTABLE or found.unique < 2 or column in ruled:
            continue
        task, why = supervised_type(read, profile, column)
        if (clear and task_meant.task_type is TaskType.TIME_SERIES_FORECASTING
                and forecastable(task, profile, column)):
            task, why = task_meant.task_type, f"{task_meant.evidence}, and '{profile.time_column}' orders the rows"
        supervised.append(Reading(task_type=task, target=column, evidence=f"{evidence}; {why}"))
        if len(supervised) == 1 and (other := other_task(read, found, task, profile)):
            supervised.append(Reading(task_type=other, target=column, evidence=f"{evidence}; the goal's words do not "
                                      f"say whether {task.value.replace('_', ' ')} or this is meant"))

    masked = naming_words(matches)
    scores = family_scores(read, masked)
    totals = family_totals(scores, named_target=False)
    unsupervised = [Reading(task_type=FAMILY_TASK[family], evidence=family_evidence(scores, family))
                    for family in sorted(totals, key=lambda f: -totals[f]) if family in FAMILY_TASK]
    ahead = [r for r in unsupervised
             if totals[_family(r)] > totals.get(Family.SUPERVISED, 0.0)] if unsupervised else []
    ordered = ahead + supervised + [r for r in unsupervised if r not in ahead]
    kind = Reading(task_type=task_meant.task_type, evidence=task_meant.evidence) if (
        task_meant and not task_meant.task_type.supervised) else None
    if kind and clear:
        ordered.insert(0, kind)
    unique: dict[tuple[str, str | None], Reading] = {}
    for reading in ordered:
        unique.setdefault((reading.task_type.value, reading.target), reading)
    offered = list(unique.values())[:limit]
    if kind and all(reading.task_type.supervised for reading in offered):
        # a question offering predictions only: the kind of task the meaning leans to, however little, is the last
        offered = offered[: limit - 1] + [kind]
    return offered


def _ranked(named: list[tuple[str, str]], chances: dict[str, float], designated: str | None) -> list[tuple[str, str]]:
    """The columns in the order of their chance of being the target (a designated one first), each with the first
    evidence found for it."""
    evidence: dict[str, str] = {}
    for column, why in named:
        evidence.setdefault(column, why)
    for column, chance in chances.items():
        evidence.setdefault(column, f"{column}: the likeliest target on all its evidence taken together ({chance:.0%})")
    return sorted(evidence.items(), key=lambda item: (item[0] != designated, -chances.get(item[0], 0.0)))


def _family(reading: Reading) -> Family:
    return next(family for family, task in FAMILY_TASK.items() if task is reading.task_type)
