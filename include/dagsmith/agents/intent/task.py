"""Which task the goal asks for: the family its task words score highest (predict a column, group rows, reduce the
columns, find unusual rows, explore), then, for a prediction, classification or regression from the target's type, and
forecasting when the goal looks ahead along a time column. A goal with no signal, or two real ones, is a question back.
"""

from __future__ import annotations

import re

from dagsmith.agents.intent.columns import holds_numbers
from dagsmith.agents.intent.lexicon import NEGATIONS, STOPWORDS, TASK_PHRASES, TASK_STEMS, Family, stems_of
from dagsmith.agents.intent.reading import Goal, find_phrase
from dagsmith.agents.intent.wording import class_list, stray
from dagsmith.agents.intent.model_mentions import mentions
from dagsmith.models.catalog import TaskType
from dagsmith.models.intent import AmbiguousGoal
from dagsmith.models.profile import ColumnProfile, DatasetProfile
from dagsmith.text import stem

#: Below this total no family has been asked for: the goal is a question back to the user.
MIN_TASK_SCORE = 0.5
#: What naming a column adds to "predict it": enough for a bare "churn?", less than any task word.
NAMED_COLUMN_WEIGHT = 0.5
#: Weight of task words that come after "based on"/"from": they describe inputs, not the task. Once a column
#: to predict is named before the inputs, they carry no weight at all ("from the applicant's credit profile").
INPUT_WORD_WEIGHT = 0.5
#: A yes/no or who/which question about the rows ("does this developer work remotely?") asks for a prediction.
QUESTION_WEIGHT = 1.0
#: A column named and then the columns it is to be told from ("grade the cut from its colour, clarity and price") ask
#: for a prediction whatever the verb; counted only when no task word was found.
INPUTS_WEIGHT = 1.0
#: Families that can be part of another one: exploring before modelling, a projection to plot clusters.
SUBORDINATE = {Family.EXPLORATION, Family.REDUCTION}
#: Which family wins a tie, strongest claim first. SUPERVISED wins only when a column to predict is named.
TIE_ORDER = (Family.ANOMALY, Family.CLUSTERING, Family.REDUCTION, Family.EXPLORATION, Family.SUPERVISED)

#: "Outliers" beside other analyses ("distributions, correlations and outliers") asks for a list per column in an
#: exploration, not for rows to score.
OUTLIER_STEM = stem("outliers")

#: Phrases that make a supervised goal about the future; with a time column that means forecasting.
#: The span may count ("next 30", "next five") and qualify ("next 30 trading days", "the coming decades").
_FUTURE = re.compile(r"\b(forecast\w*|future|ahead|upcoming|horizon|tomorrow|"
                     r"(?:next|coming|following)\s+(?:(?:\d+|few|several|two|three|four|five|six|seven|eight|nine|ten|"
                     r"eleven|twelve|twenty|thirty|fifty|hundred)\s+)?(?:[a-z]+\s+)?"
                     r"(?:hours?|days?|weeks?|months?|quarters?|years?|decades?|seasons?|periods?))\b")
#: Words that settle classification against regression outright, whatever the target looks like.
FORCE_CLASSIFICATION = frozenset(stems_of("classify classification classifier categorise categorize binary multiclass"))
FORCE_REGRESSION = frozenset(stems_of("regression regressor regress continuous"))
#: Hints that only break a tie when the target is numeric with few distinct values.
CLASSIFICATION_HINTS = frozenset(stems_of("whether class category which kind label diagnose distinguish grade screen"))
REGRESSION_HINTS = frozenset(stems_of("how much many amount number quantity level value estimate"))
HOW = stem("how")
#: Verbs after which "how" asks in what way ("how will they vote", "how does age affect it"), not how much.
AUXILIARIES = frozenset(stems_of("is are was were be do does did will would shall should can could may might must"))

#: A numeric target with at most this many values can be classes when the goal hints so.
FEW_VALUES = 10

#: The task each family but a prediction stands for: no target decides it.
FAMILY_TASK = {
    Family.CLUSTERING: TaskType.CLUSTERING,
    Family.REDUCTION: TaskType.DIMENSIONALITY_REDUCTION,
    Family.ANOMALY: TaskType.ANOMALY_DETECTION,
    Family.EXPLORATION: TaskType.EXPLORATORY_ANALYSIS,
}


def family_scores(goal: Goal, masked: set[int], named_target: bool = False,
                  named_inputs: bool = False) -> dict[Family, list[tuple[str, float]]]:
    """Each family's matched phrases with their weights.

    Words inside a column's name or a list of its classes, or after a negation, don't count; words among the inputs
    ("from its fatty acid profile") count half, or nothing once a column to predict is named before them, as they
    describe the features rather than the task. A question about the rows counts for a prediction, and so does a
    column named before inputs that name columns too (``named_inputs``) when no task word says otherwise.
    """
    found: dict[Family, list[tuple[str, float]]] = {}
    input_weight = 0.0 if named_target else INPUT_WORD_WEIGHT
    for family, phrase, weight in TASK_PHRASES:
        hits = [at for at in find_phrase(goal.stems, phrase) if not masked & set(range(at, at + len(phrase)))
                and not _negated(goal.stems, at)
                and not (family is not Family.SUPERVISED and _names_a_place(goal.stems, at))]
        if hits:
            in_inputs = goal.among_inputs(min(hits))
            said = goal.said(min(hits), min(hits) + len(phrase))
            found.setdefault(family, []).append((said, weight * (input_weight if in_inputs else 1)))
    if goal.question:
        found.setdefault(Family.SUPERVISED, []).append(("a question about the rows", QUESTION_WEIGHT))
    if named_target and named_inputs and not found:
        found[Family.SUPERVISED] = [("a column named, then the columns it is to be told from", INPUTS_WEIGHT)]
    anomaly = found.get(Family.ANOMALY, [])
    if Family.EXPLORATION in found and anomaly and all(stem(said) == OUTLIER_STEM for said, _ in anomaly):
        found[Family.EXPLORATION] += found.pop(Family.ANOMALY)  # outliers listed among analyses are one more analysis
    return {family: hits for family, hits in found.items() if any(weight for _, weight in hits)}


#: Prepositions that set where or what the rows are about ("a job on the computing cluster").
SETTING_PREPOSITIONS = frozenset(stems_of("on at in within across from for over about"))
ARTICLES = frozenset(stems_of("the a an this that these those their its our my your his her"))


def _names_a_place(stems: tuple[str, ...], at: int) -> bool:
    """Whether the task word at ``at`` heads a named thing the rows belong to, not the task: after a preposition and a
    word that is no task word, determiners aside ("a job on the computing cluster"); "in clusters" and "in the
    clusters" still ask for them. Only the nouns of unsupervised tasks are read so: a task verb starts a clause."""
    before = [s for s in stems[max(0, at - 4) : at] if s not in ARTICLES]
    return (len(before) >= 2 and before[-1] not in STOPWORDS and before[-1] not in TASK_STEMS
            and before[-2] in SETTING_PREPOSITIONS)


def _negated(stems: tuple[str, ...], at: int, window: int = 3) -> bool:
    return any(s in NEGATIONS for s in stems[max(0, at - window) : at])


def family_totals(scores: dict[Family, list[tuple[str, float]]], named_target: bool) -> dict[Family, float]:
    """Each family's total weight; naming a column to predict adds to the prediction's."""
    totals = {family: sum(weight for _, weight in hits) for family, hits in scores.items()}
    if named_target:
        totals[Family.SUPERVISED] = totals.get(Family.SUPERVISED, 0.0) + NAMED_COLUMN_WEIGHT
    return totals


def choose_family(scores: dict[Family, list[tuple[str, float]]], named_target: bool, goal: str,
                  profile: DatasetProfile) -> tuple[Family, float, float]:
    """The family the goal asks for, its words' total weight and how far ahead of the next family that is. Raises
    AmbiguousGoal on no signal or a real conflict."""
    totals = family_totals(scores, named_target)
    if not totals or max(totals.values()) < MIN_TASK_SCORE:
        raise AmbiguousGoal(vague_goal_question(goal, profile))
    ranked = sorted(totals, key=lambda f: (-totals[f], _tie_rank(f, named_target)))
    best = ranked[0]
    runner_up = next((f for f in ranked[1:] if f not in SUBORDINATE and best not in SUBORDINATE), None)
    if runner_up and totals[runner_up] >= 2 and totals[best] - totals[runner_up] < 1:
        raise AmbiguousGoal(
            f"The goal asks for two different things: to {best.value} and to {runner_up.value}. Which one do you "
            f"want? dagsmith builds one pipeline per goal."
        )
    second = max((t for f, t in totals.items() if f != best), default=0.0)
    return best, totals[best], totals[best] - second


def _tie_rank(family: Family, named_target: bool) -> int:
    return -1 if family is Family.SUPERVISED and named_target else TIE_ORDER.index(family)


def vague_goal_question(goal: str, profile: DatasetProfile, why: str = "") -> str:
    examples = [c.column for c in profile.target_candidates[:3]] or profile.column_names[:3]
    shown = f"'{goal.strip()}'" if goal.strip() else "an empty goal"
    return (
        f"I could not tell what you want from {shown}.{why} Do you want to predict a column (which one? e.g. "
        f"{', '.join(examples)}), group similar rows, reduce the columns to a few components, find unusual rows, "
        f"or explore the data?"
    )


def family_evidence(scores: dict[Family, list[tuple[str, float]]], family: Family) -> str:
    said = [phrase for phrase, _ in scores.get(family, [])]
    return f"the goal says {', '.join(repr(s) for s in said)}" if said else "the goal names a column and nothing else"


def supervised_type(read: Goal, profile: DatasetProfile, target_name: str | None) -> tuple[TaskType, str]:
    """Classification or regression from the target; forecasting when the goal looks ahead along a time column."""
    target = profile.column(target_name) if target_name else None
    task, why = supervised_task(read, target, profile)
    future = _FUTURE.search(" ".join(read.words))
    if not future:
        return task, why
    if forecastable(task, profile, target_name):
        return TaskType.TIME_SERIES_FORECASTING, (
            f"the goal looks ahead ('{future.group(0)}') and '{profile.time_column}' orders the rows in time")
    return task, why + f"; the goal looks ahead ('{future.group(0)}') but " + (
        "there is no time column to forecast along" if not profile.time_column else "the target is not numeric")


def supervised_task(goal: Goal, target: ColumnProfile | None, profile: DatasetProfile) -> tuple[TaskType, str]:
    """Classification or regression from the target's type; goal words decide only where the type cannot. Words
    inside a model's name ("logistic regression") force nothing; the task the name implies is a hint."""
    said, hinted, forced = _task_words(goal)
    if target is None:
        task = TaskType.REGRESSION if "regression" in {forced, *hinted} - {"classification"} else \
            TaskType.BINARY_CLASSIFICATION
        return task, "no target column to decide from; read from the goal's words only"
    shape = f"'{target.name}' has " + (f"{target.unique} distinct values" if target.unique != 1 else "a single value")
    if forced == "regression":
        return TaskType.REGRESSION, f"the goal asks for regression ({shape})"
    if forced == "classification" or not holds_numbers(target):
        return _classes(target), f"{shape} ({class_list(target)}), so it is predicted as classes"
    task, why = _numeric_task(target, said, hinted, profile)
    return task, f"{shape}{why}{stray(target)}"


def other_task(goal: Goal, target: ColumnProfile, task: TaskType, profile: DatasetProfile) -> TaskType | None:
    """The other task than ``task`` a target's values allow when no word of the goal chose between them: a numeric
    column of a few values (a rating of 1 to 5, a count of visits) is as much classes as an amount, and a number on
    rows ordered in time may be forecast as well as predicted row by row. None when the words or the values decide."""
    said, hinted, forced = _task_words(goal)
    if forced or not holds_numbers(target):
        return None
    if 2 < target.unique <= FEW_VALUES and not _class_votes(said, hinted):
        return {TaskType.REGRESSION: TaskType.MULTICLASS_CLASSIFICATION,
                TaskType.MULTICLASS_CLASSIFICATION: TaskType.REGRESSION}.get(task)
    if forecastable(task, profile, target.name):
        return TaskType.TIME_SERIES_FORECASTING
    return None


def forecastable(task: TaskType, profile: DatasetProfile, target: str | None) -> bool:
    """Whether a regression of ``target`` could be a forecast instead: another column orders the rows in time."""
    return task is TaskType.REGRESSION and profile.time_column not in {None, target}


def _task_words(goal: Goal) -> tuple[set[str], set[str], str | None]:
    """The goal's stems that may hint at a task (not those inside a model's name, nor a "how" asking in what way),
    the tasks the models it names imply, and the task its words force, if any."""
    text = " ".join(goal.words)
    named = mentions(text)
    inside = {text[: m.start].count(" ") + i for m in named for i in range(m.said.count(" ") + 1)}
    said = {s for i, s in enumerate(goal.stems) if i not in inside and not _asks_a_way(goal, i)}
    hinted = {m.task for m in named if m.task}
    forced = ("classification" if said & FORCE_CLASSIFICATION else "regression" if said & FORCE_REGRESSION else None)
    return said, hinted, forced


def _class_votes(said: set[str], hinted: set[str]) -> int:
    """Hints for classes less hints for an amount."""
    return (len(said & CLASSIFICATION_HINTS) - len(said & REGRESSION_HINTS)
            + ("classification" in hinted) - ("regression" in hinted))


def _numeric_task(target: ColumnProfile, said: set[str], hinted: set[str],
                  profile: DatasetProfile) -> tuple[TaskType, str]:
    if target.unique <= 2:
        return TaskType.BINARY_CLASSIFICATION, ": a numeric yes/no"
    if target.unique <= FEW_VALUES:
        votes = _class_votes(said, hinted)
        suggested = next((c.suggested_task for c in profile.target_candidates if c.column == target.name), None)
        if votes > 0 or (votes == 0 and suggested is not None and suggested.classification):
            return TaskType.MULTICLASS_CLASSIFICATION, ", few enough to be classes, as the goal or profile says"
        return TaskType.REGRESSION, ", numeric and ordered, so its value is predicted"
    return TaskType.REGRESSION, ": a continuous number, so its value is predicted"


def asks_other_kind(goal: Goal, task: TaskType) -> bool:
    """The goal's own words (inputs aside) hint at an amount ("how many") while ``task`` predicts classes, or at a
    class ("whether") while it predicts an amount: the target's values give another kind of answer than the one asked
    for, a sign that the target is not what the goal means."""
    said = {s for i, s in enumerate(goal.stems) if not goal.among_inputs(i) and not _asks_a_way(goal, i)}
    amount, kind = bool(said & REGRESSION_HINTS), bool(said & CLASSIFICATION_HINTS)
    if task.classification:
        return amount and not kind
    return task.supervised and kind and not amount


def _asks_a_way(goal: Goal, at: int) -> bool:
    """Whether the word at ``at`` is a "how" that asks in what way, followed by a verb ("how will the members vote: yes,
    no or abstain?"), which hints at no amount, unlike "how much" or "how long"."""
    return goal.stems[at] == HOW and at + 1 < len(goal.stems) and goal.stems[at + 1] in AUXILIARIES


def _classes(column: ColumnProfile) -> TaskType:
    return TaskType.BINARY_CLASSIFICATION if column.unique <= 2 else TaskType.MULTICLASS_CLASSIFICATION
