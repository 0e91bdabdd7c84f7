"""Agent A2, the intent detector: what the user wants, read from a goal in plain language and the data profile.

This is the deterministic reasoner. Weighted word rules over the goal pick a task family; the profile then
settles what words cannot: the target's type decides classification against regression, its classes binary
against multiclass, and a time column whether forecasting is possible at all. Every inferred field gets a
reason a person can check. A goal it cannot read with confidence raises ``AmbiguousGoal`` with a question
instead of a guess. The goal is only ever data: it is split into words and compared, never executed.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from dagsmith.agents.column_requests import column_constraints, excluded_columns
from dagsmith.agents.intent.columns import (
    CATEGORY_TYPES,
    KIND_NAMES,
    NEVER_FEATURES,
    UNPREDICTABLE,
    holds_numbers,
    is_numeric,
)
from dagsmith.agents.intent.lexicon import CLAUSE_BREAKS, NEGATIONS, TASK_PHRASES, Family, stems_of
from dagsmith.agents.intent.mentions import STRONG_MATCH, MatchKind, column_matches, column_named, explicit_target
from dagsmith.agents.intent.reading import Goal, find_phrase, read_goal
from dagsmith.agents.intent.target import TargetChoice, focus_column, supervised_target, target_reason
from dagsmith.agents.intent.wording import class_list, counted, percent, shortlist, stray
from dagsmith.agents.model_mentions import mentions
from dagsmith.agents.repeats import repeated_ids
from dagsmith.agents.stages import ordered
from dagsmith.models.catalog import Stage, TaskType
from dagsmith.models.intent import (
    AmbiguousGoal,
    Constraint,
    ConstraintKind,
    Intent,
    IntentIssue,
    IssueLevel,
)
from dagsmith.models.profile import ColumnProfile, DatasetProfile, SemanticType
from dagsmith.text import stem, words

__all__ = ["detect_intent", "understand", "validate_intent"]

#: "Outliers" beside other analyses ("distributions, correlations and outliers") asks for a list per column in an
#: exploration, not for rows to score.
OUTLIER_STEM = stem("outliers")

#: Below this total no family has been asked for: the goal is a question back to the user.
MIN_TASK_SCORE = 0.5
#: What naming a column adds to "predict it": enough for a bare "churn?", less than any task word.
NAMED_COLUMN_WEIGHT = 0.5
#: Jinja expressions, statements and comments (Airflow's templates), closed or cut off at the end of the goal.
TEMPLATE_MARKUP = re.compile(r"\{\{.*?(?:\}\}|$)|\{%.*?(?:%\}|$)|\{#.*?(?:#\}|$)", re.DOTALL)
#: Weight of task words that come after "based on"/"from": they describe inputs, not the task. Once a column
#: to predict is named before the inputs, they carry no weight at all ("from the applicant's credit profile").
INPUT_WORD_WEIGHT = 0.5
#: A yes/no or who/which question about the rows ("does this developer work remotely?") asks for a prediction.
QUESTION_WEIGHT = 1.0
#: Families that can be part of another one: exploring before modelling, a projection to plot clusters.
SUBORDINATE = {Family.EXPLORATION, Family.REDUCTION}
#: Which family wins a tie, strongest claim first. SUPERVISED wins only when a column to predict is named.
TIE_ORDER = (Family.ANOMALY, Family.CLUSTERING, Family.REDUCTION, Family.EXPLORATION, Family.SUPERVISED)

#: Phrases that make a supervised goal about the future; with a time column that means forecasting.
_FUTURE = re.compile(r"\b(forecast\w*|future|ahead|upcoming|horizon|tomorrow|"
                     r"(?:next|coming|following)\s+(?:\d+\s+|few\s+)?"
                     r"(?:days?|weeks?|months?|quarters?|years?|seasons?|periods?))\b")
#: Words that settle classification against regression outright, whatever the target looks like.
FORCE_CLASSIFICATION = frozenset(stems_of("classify classification classifier categorise categorize binary multiclass"))
FORCE_REGRESSION = frozenset(stems_of("regression regressor regress continuous"))
#: Hints that only break a tie when the target is numeric with few distinct values.
CLASSIFICATION_HINTS = frozenset(stems_of("whether class category which kind label diagnose distinguish grade"))
REGRESSION_HINTS = frozenset(stems_of("how much many amount number quantity level value estimate"))


def _negated(stems: tuple[str, ...], at: int, window: int = 3) -> bool:
    return any(s in NEGATIONS for s in stems[max(0, at - window) : at])


def family_scores(goal: Goal, masked: set[int], named_target: bool = False) -> dict[Family, list[tuple[str, float]]]:
    """Each family's matched phrases with their weights.

    Words inside a column's name or a list of its classes, or after a negation, don't count; words among the inputs
    ("from its fatty acid profile") count half, or nothing once a column to predict is named before them, as they
    describe the features rather than the task. A question about the rows counts for a prediction.
    """
    found: dict[Family, list[tuple[str, float]]] = {}
    input_weight = 0.0 if named_target else INPUT_WORD_WEIGHT
    for family, phrase, weight in TASK_PHRASES:
        hits = [at for at in find_phrase(goal.stems, phrase)
                if not masked & set(range(at, at + len(phrase))) and not _negated(goal.stems, at)]
        if hits:
            in_inputs = min(hits) >= goal.features_from
            said = goal.said(min(hits), min(hits) + len(phrase))
            found.setdefault(family, []).append((said, weight * (input_weight if in_inputs else 1)))
    if goal.question:
        found.setdefault(Family.SUPERVISED, []).append(("a question about the rows", QUESTION_WEIGHT))
    anomaly = found.get(Family.ANOMALY, [])
    if Family.EXPLORATION in found and anomaly and all(stem(said) == OUTLIER_STEM for said, _ in anomaly):
        found[Family.EXPLORATION] += found.pop(Family.ANOMALY)  # outliers listed among analyses are one more analysis
    return {family: hits for family, hits in found.items() if any(weight for _, weight in hits)}


def choose_family(scores: dict[Family, list[tuple[str, float]]], named_target: bool, goal: str,
                  profile: DatasetProfile) -> tuple[Family, float]:
    """The family the goal asks for, and how sure (0-1). Raises AmbiguousGoal on no signal or a real conflict."""
    totals = {family: sum(weight for _, weight in hits) for family, hits in scores.items()}
    if named_target:
        totals[Family.SUPERVISED] = totals.get(Family.SUPERVISED, 0.0) + NAMED_COLUMN_WEIGHT
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
    confidence = min(1.0, 0.5 + totals[best] / 8) - 0.3 * min(1.0, second / totals[best])
    return best, max(0.1, confidence)


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


#: A numeric target with at most this many values can be classes when the goal hints so.
FEW_VALUES = 10

FAMILY_TASK = {
    Family.CLUSTERING: TaskType.CLUSTERING,
    Family.REDUCTION: TaskType.DIMENSIONALITY_REDUCTION,
    Family.ANOMALY: TaskType.ANOMALY_DETECTION,
    Family.EXPLORATION: TaskType.EXPLORATORY_ANALYSIS,
}


def _classes(column: ColumnProfile) -> TaskType:
    return TaskType.BINARY_CLASSIFICATION if column.unique <= 2 else TaskType.MULTICLASS_CLASSIFICATION


def supervised_task(goal: Goal, target: ColumnProfile | None, profile: DatasetProfile) -> tuple[TaskType, str]:
    """Classification or regression from the target's type; goal words decide only where the type cannot. Words
    inside a model's name ("logistic regression") force nothing; the task the name implies is a hint."""
    text = " ".join(goal.words)
    named = mentions(text)
    inside = {text[: m.start].count(" ") + i for m in named for i in range(m.said.count(" ") + 1)}
    said = {s for i, s in enumerate(goal.stems) if i not in inside}
    hinted = {m.task for m in named if m.task}
    forced = ("classification" if said & FORCE_CLASSIFICATION else "regression" if said & FORCE_REGRESSION else None)
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


def _numeric_task(target: ColumnProfile, said: set[str], hinted: set[str],
                  profile: DatasetProfile) -> tuple[TaskType, str]:
    if target.unique <= 2:
        return TaskType.BINARY_CLASSIFICATION, ": a numeric yes/no"
    if target.unique <= FEW_VALUES:
        votes = (len(said & CLASSIFICATION_HINTS) - len(said & REGRESSION_HINTS)
                 + ("classification" in hinted) - ("regression" in hinted))
        suggested = next((c.suggested_task for c in profile.target_candidates if c.column == target.name), None)
        if votes > 0 or (votes == 0 and suggested.classification):
            return TaskType.MULTICLASS_CLASSIFICATION, ", few enough to be classes, as the goal or profile says"
        return TaskType.REGRESSION, ", numeric and ordered, so its value is predicted"
    return TaskType.REGRESSION, ": a continuous number, so its value is predicted"


_NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                 "eight": 8, "nine": 9, "ten": 10, "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40,
                 "fifty": 50, "sixty": 60, "ninety": 90, "couple": 2, "few": 3}
_NUMBER = r"(\d+(?:\.\d+)?|" + "|".join(_NUMBER_WORDS) + r")"
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600}  # by the unit's first letter; days are a forecast horizon, not a budget
_TIME = re.compile(
    r"\b(?:in|within|under|below|less than|at most|max|maximum|no more than|no longer than|budget of|limit of|"
    r"than|only|just)\s+(?:about\s+)?(half\s+an?|" + _NUMBER[1:-1] + r")\s+"
    r"(s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?)\b"
)
_QUICK = re.compile(r"\b(quick|quickly|fast|asap|hurry|rapidly|in a rush|right away|speedy)\b")
QUICK_BUDGET_SECONDS = 300
_INTERPRETABLE = re.compile(
    r"\b(explainable|explainability|interpretable|interpretability|interpret|explain|transparent|transparency|"
    r"white box|glass box|auditable|understandable|human readable|simple rules|regulators?|compliance)\b"
)
_BLACK_BOX = re.compile(r"\bblack ?box(?:es)?\b")
#: Model families a goal can rule out ("no neural nets", "without deep learning", "avoid SVMs").
_MAX_FEATURES = re.compile(
    r"\b(at most|no more than|max|maximum|up to|only|just|limit(?:ed)? to|top|fewer than|less than|under|"
    r"a maximum of)\s+" + _NUMBER + r"\s+(?:\w+\s+)?(?:features?|variables?|columns?|predictors?|inputs?|attributes?)\b"
)
#: Metric names as a goal says them -> the name evaluators report.
METRICS = {
    "recall": r"\brecall\b|\bsensitivity\b|true positive rate|(?:catch|find) (?:as many|all|most)|miss as few",
    "precision": r"\bprecision\b|false alarms?|false positives?",
    "f1": r"\bf 1\b|\bf score\b|\bf measure\b",
    "roc_auc": r"\bauc\b|\broc\b",
    "balanced_accuracy": r"balanced accuracy",
    "accuracy": r"(?<!balanced )\baccuracy\b",
    "log_loss": r"\blog ?loss\b|cross entropy",
    "rmse": r"\brmse\b|root mean squared? error",
    "mae": r"\bmae\b|mean absolute error",
    "r2": r"\br 2\b|r squared|coefficient of determination",
    "mape": r"\bmape\b|percentage error",
    "silhouette": r"\bsilhouette\b",
}
_CLASSIFICATION_METRICS = {"recall", "precision", "f1", "roc_auc", "balanced_accuracy", "accuracy", "log_loss"}
_REGRESSION_METRICS = {"rmse", "mae", "r2", "mape"}
#: Which metrics make sense for which task (a goal asking for recall on a regression gets a warning).
METRICS_FOR: dict[TaskType, set[str]] = {
    TaskType.BINARY_CLASSIFICATION: _CLASSIFICATION_METRICS,
    TaskType.MULTICLASS_CLASSIFICATION: _CLASSIFICATION_METRICS,
    TaskType.REGRESSION: _REGRESSION_METRICS,
    TaskType.TIME_SERIES_FORECASTING: _REGRESSION_METRICS,
    TaskType.CLUSTERING: {"silhouette"},
}
_N_CLUSTERS = re.compile(
    r"\b" + _NUMBER + r"\s+(?:\w+\s+)?(?:clusters?|groups?|segments?|personas?|cohorts?)\b|\bk (\d+)\b")
_N_COMPONENTS = re.compile(r"\b" + _NUMBER + r"\s*(?:d|dimensions?|dims?|components?|axes)\b")
#: a share of the rows: "the top 2%", "about 1 percent of the transactions", "0.5 % most unusual"
_SHARE = re.compile(r"\b(\d+(?:\.\d+)?)\s*(?:%|percent\b|per cent\b)")
_DEDUPLICATE = re.compile(r"\b(de ?dup\w*|duplicat\w*|repeated (?:rows|records|entries))\b")
_VISUALISE = re.compile(r"\b(visuali[sz]\w*|plots?|plotting|charts?|graphs?|scatter|show me|picture)\b")


def _number(said: str) -> float:
    return float(said) if said[0].isdigit() else float(_NUMBER_WORDS[said])


#: What each analysis of an exploration is called in goals (the names are the exploration service's ``analyses``).
ANALYSIS_WORDS = {
    "statistics": re.compile(r"\b(statistics?|stats|averages?|means?|medians?|(?:value )?ranges?|minimum|maximum|"
                             r"typical values?)\b"),  # not 'summarise' or 'describe': those ask for everything
    "distributions": re.compile(r"\b(distributions?|distributed|histograms?|spread|skew\w*)\b"),
    "missingness": re.compile(r"\b(missing\w*|gaps|nulls?|nan|completeness|empty values)\b"),
    "correlations": re.compile(r"\b(correlat\w*|relationships?|relate[sd]?|relating|associations?|"
                               r"go together|move together)\b"),
    "outliers": re.compile(r"\b(outliers?|extreme values?|anomal\w*|unusual values?)\b"),
}


def parse_constraints(goal: str, task: TaskType) -> list[Constraint]:
    """Limits the goal states, each with the words it was read from."""
    text = " ".join(words(goal))
    return [*_time_budget(text), *_interpretability(text), *_model_requests(text), *_max_features(text),
            *_metrics(text), *_shape_requests(text, task), *_anomaly_share(goal.lower(), task),
            *_deduplication_request(text), *_analyses(text, task)]


def _anomaly_share(goal: str, task: TaskType) -> list[Constraint]:
    """The share of rows to flag, read from the goal as written (word splitting drops the percent sign)."""
    share = _SHARE.search(goal)
    if not share or task is not TaskType.ANOMALY_DETECTION or not 0 < float(share.group(1)) <= 50:
        return []
    return [Constraint(kind=ConstraintKind.ANOMALY_FRACTION, value=float(share.group(1)) / 100,
                       reason=f"the goal says '{share.group(0)}'")]


def _time_budget(text: str) -> list[Constraint]:
    found = _TIME.search(text)
    if found:
        amount, unit = found.group(1), found.group(2)
        value = 0.5 if amount.startswith("half") else _number(amount)
        seconds = int(value * _UNIT_SECONDS[unit[0]])
        return [Constraint(kind=ConstraintKind.TIME_BUDGET, value=seconds, reason=f"the goal says '{found.group(0)}'")]
    quick = _QUICK.search(text)
    if quick:
        return [Constraint(kind=ConstraintKind.TIME_BUDGET, value=QUICK_BUDGET_SECONDS,
                           reason=f"'{quick.group(0)}' read as a {QUICK_BUDGET_SECONDS // 60}-minute budget")]
    return []


def _ruled_out(text: str, at: int) -> bool:
    """Whether a negation governs the words at ``at``: "no neural nets", "without deep learning or boosting", but
    not "no neural nets and random forests are fine" (a new clause starts at "and")."""
    before = words(text[:at])
    clause = before[max((i + 1 for i, w in enumerate(before) if w in CLAUSE_BREAKS), default=0):]
    return any(stem(w) in NEGATIONS for w in clause[-4:])


def _interpretability(text: str) -> list[Constraint]:
    black_box = _BLACK_BOX.search(text)
    if black_box and _ruled_out(text, black_box.start()):
        return [Constraint(kind=ConstraintKind.INTERPRETABLE, value=True,
                           reason=f"the goal rules out black boxes ('{black_box.group(0)}')")]
    said = next((m for m in _INTERPRETABLE.finditer(text) if not _ruled_out(text, m.start())), None)
    if not said:
        return []
    return [Constraint(kind=ConstraintKind.INTERPRETABLE, value=True, reason=f"the goal says '{said.group(0)}'")]


def _model_requests(text: str) -> list[Constraint]:
    """Models the goal rules out (their whole family) and the ones it asks for, each read from the names."""
    excluded: dict[str, str] = {}
    requested: dict[str, str] = {}
    for mention in mentions(text):
        if _ruled_out(text, mention.start):
            excluded.setdefault(mention.name.family, mention.said)
        else:
            requested.setdefault(mention.label, mention.said)
    found = [Constraint(kind=ConstraintKind.EXCLUDE_FAMILY, value=family, reason=f"the goal rules out '{said}'")
             for family, said in excluded.items()]
    if requested:
        said = ", ".join(f"'{s}'" for s in requested.values())
        found.append(Constraint(kind=ConstraintKind.MODEL, value=list(requested), reason=f"the goal asks for {said}"))
    return found


def _max_features(text: str) -> list[Constraint]:
    found = _MAX_FEATURES.search(text)
    if not found:
        return []
    limit = int(_number(found.group(2))) - (1 if found.group(1) in {"fewer than", "less than"} else 0)
    return [Constraint(kind=ConstraintKind.MAX_FEATURES, value=limit, reason=f"the goal says '{found.group(0)}'")]


def _metrics(text: str) -> list[Constraint]:
    hits = sorted((m.start(), name, m.group(0)) for name, pattern in METRICS.items() if (m := re.search(pattern, text)))
    return [Constraint(kind=ConstraintKind.METRIC, value=name, reason=f"the goal mentions '{said}'")
            for _, name, said in hits]


def _shape_requests(text: str, task: TaskType) -> list[Constraint]:
    found = []
    clusters = _N_CLUSTERS.search(text)
    if clusters and task is TaskType.CLUSTERING:
        count = int(_number(clusters.group(1) or clusters.group(2)))
        found.append(Constraint(kind=ConstraintKind.N_CLUSTERS, value=count,
                                reason=f"the goal says '{clusters.group(0)}'"))
    components = _N_COMPONENTS.search(text)
    if components and task in {TaskType.DIMENSIONALITY_REDUCTION, TaskType.CLUSTERING}:
        found.append(Constraint(kind=ConstraintKind.N_COMPONENTS, value=int(_number(components.group(1))),
                                reason=f"the goal says '{components.group(0)}'"))
    visual = _VISUALISE.search(text)
    if visual:
        found.append(Constraint(kind=ConstraintKind.VISUALISE, value=True, reason=f"the goal says '{visual.group(0)}'"))
    return found


def _analyses(text: str, task: TaskType) -> list[Constraint]:
    """The analyses an exploratory goal names ("distributions, correlations and outliers"); none named: all run."""
    if task is not TaskType.EXPLORATORY_ANALYSIS:
        return []
    named = {name: found.group(0) for name, pattern in ANALYSIS_WORDS.items() if (found := pattern.search(text))}
    if not named:
        return []
    said = ", ".join(f"'{word}'" for word in named.values())
    return [Constraint(kind=ConstraintKind.ANALYSES, value=list(named), reason=f"the goal asks for {said}")]


def _deduplication_request(text: str) -> list[Constraint]:
    said = next((m for m in _DEDUPLICATE.finditer(text) if not _ruled_out(text, m.start())), None)
    if not said:
        return []
    return [Constraint(kind=ConstraintKind.DEDUPLICATE, value=True, reason=f"the goal says '{said.group(0)}'")]


_SUPERVISED_BASE = {
    Stage.LOADING: "reads the dataset",
    Stage.VALIDATION: "checks the table and the target before anything is learnt",
    Stage.SPLITTING: "holds out a test set so the evaluation is honest",
    Stage.MODELLING: "learns to predict the target",
    Stage.EVALUATION: "measures the model on the held-out rows",
    Stage.EXPLANATION: "names what drives the predictions, measured on the held-out rows",
}
#: The stages each task cannot do without, and why. Stages the data calls for are added by STAGE_RULES.
BASE_STAGES: dict[TaskType, dict[Stage, str]] = {
    TaskType.BINARY_CLASSIFICATION: _SUPERVISED_BASE,
    TaskType.MULTICLASS_CLASSIFICATION: _SUPERVISED_BASE,
    TaskType.REGRESSION: _SUPERVISED_BASE,
    TaskType.TIME_SERIES_FORECASTING: {
        **_SUPERVISED_BASE,
        Stage.SPLITTING: "a time-based split holds out the latest rows, so the model never sees the future",
        Stage.FEATURE_ENGINEERING: "turns the dates into features (year, month, day of week)",
    },
    TaskType.CLUSTERING: {
        Stage.LOADING: "reads the dataset",
        Stage.VALIDATION: "checks the table before grouping",
        Stage.SCALING: "distances need features on one scale",
        Stage.CLUSTERING: "groups similar rows",
        Stage.EVALUATION: "measures how well separated the groups are",
    },
    TaskType.DIMENSIONALITY_REDUCTION: {
        Stage.LOADING: "reads the dataset",
        Stage.VALIDATION: "checks the table before projecting it",
        Stage.SCALING: "components need features on one scale",
        Stage.DIMENSIONALITY_REDUCTION: "replaces the columns with a few components",
    },
    TaskType.ANOMALY_DETECTION: {
        Stage.LOADING: "reads the dataset",
        Stage.VALIDATION: "checks the table before scoring rows",
        Stage.ANOMALY_DETECTION: "scores every row and flags the unusual ones",
    },
    TaskType.EXPLORATORY_ANALYSIS: {
        Stage.LOADING: "reads the dataset",
        Stage.EDA: "describes every column: counts, gaps, distributions, correlations",
    },
}
#: Optional for every task: a picture and a written report of what was done.
_ALWAYS_OPTIONAL = {Stage.VISUALISATION: "plots of the data and the results",
                    Stage.REPORTING: "a written summary of the pipeline and its metrics"}
_EXTRA_OPTIONAL: dict[TaskType, dict[Stage, str]] = {
    TaskType.CLUSTERING: {Stage.DIMENSIONALITY_REDUCTION: "a 2-D projection makes the groups visible"},
    TaskType.ANOMALY_DETECTION: {Stage.EDA: "a description of the data puts the flagged rows in context",
                                 Stage.SCALING: "distance-based detectors need one scale"},
}

_MODEL_TASKS = set(TaskType) - {TaskType.EXPLORATORY_ANALYSIS}


@dataclass(frozen=True)
class DataView:
    """What the stage rules look at: the profile, split into the target and the features."""

    profile: DatasetProfile
    task: TaskType
    target: ColumnProfile | None
    features: list[ColumnProfile]
    constraints: list[Constraint]


#: (stage, required, reason); required None: the data was checked and the stage is left out, the reason says why.
StageDecision = tuple[Stage, bool | None, str]
StageRule = Callable[[DataView], StageDecision | None]


def _imputation(view: DataView) -> StageDecision | None:
    gaps = sorted((c for c in view.features if c.missing), key=lambda c: -c.missing_ratio)
    target_gaps = view.target.missing + view.target.not_numbers if view.target and view.task.supervised \
        else 0
    if not gaps and not target_gaps:
        return None
    parts = []
    if gaps:
        worst = shortlist([f"{c.name} {percent(c.missing_ratio)}" for c in gaps], 3)
        parts.append(f"{counted(len(gaps), 'feature column')} with missing values ({worst})")
    if target_gaps:
        why = " (missing, or not a number)" if view.target.not_numbers else ""
        parts.append(f"{counted(target_gaps, 'row')} without a target{why} must be dropped")
    return Stage.IMPUTATION, True, "; ".join(parts)


def _encoding(view: DataView) -> StageDecision | None:
    categories = [c.name for c in view.features if not is_numeric(c) and c.semantic_type in CATEGORY_TYPES]
    if not categories:
        return None
    return (Stage.ENCODING, True,
            f"{counted(len(categories), 'categorical feature')} ({shortlist(categories)}) to numbers")


def _column_filtering(view: DataView) -> StageDecision | None:
    unusable = [c.name for c in view.profile.columns if c.semantic_type in NEVER_FEATURES and c is not view.target]
    constant = [c.name for c in view.features if c.unique <= 1]
    what = [f"ids or free text ({shortlist(unusable)})"] if unusable else []
    what += [f"constant ({shortlist(constant)})"] if constant else []
    return (Stage.COLUMN_FILTERING, True, "drops columns no model can use: " + "; ".join(what)) if what else None


#: Repeated rows are copies when at least this share as many of them stand alone (no other row differs from them in
#: a single column) as of the rows that do not repeat; chance repeats rows where rows crowd, far less often alone.
COPIES_ALONE_SHARE = 0.5


def _deduplication(view: DataView) -> StageDecision | None:
    """Deduplicate records entered twice (a repeated id, or copies as alone as any other row), never rows that
    coincide by chance (survey answers, a plan price every new customer pays): those are real observations.
    A goal asking for it gets it."""
    asked = next((c for c in view.constraints if c.kind is ConstraintKind.DEDUPLICATE), None)
    evidence = _repeats(view.profile)
    if asked:
        return Stage.DEDUPLICATION, True, f"asked for: {asked.reason}" + (f"; {evidence[1]}" if evidence else "")
    if evidence is None:
        return None
    copies, why = evidence
    return Stage.DEDUPLICATION, False if copies else None, why


def _repeats(profile: DatasetProfile) -> tuple[bool, str] | None:
    """(whether the repeats are copies, why), or None when no row and no record id repeats."""
    ids = [f"{n} in '{name}'" for name, n in repeated_ids(profile).items()]
    if ids:
        return True, f"repeated record ids ({shortlist(ids)}): the same record entered more than once"
    found = profile.repeated_rows
    if found is None:
        return None
    alone, usual = found.isolated / found.rows, found.isolated_share
    copies = found.isolated > 0 and alone >= COPIES_ALONE_SHARE * usual
    what = f"{counted(found.rows, 'repeated row')} ({percent(found.rows / max(found.checked_rows, 1))})"
    shares = (f"{percent(alone) if found.isolated else 'none'} of them stand alone (no other row differs from them "
              f"in a single column), against {percent(usual)} of the other rows")
    if copies:
        return True, f"{what}: {shares}, so they are copies, not coincidences"
    return False, (f"{what}, but {shares}: they sit where rows crowd and coincide by chance, so removing them "
                   f"would drop real observations")


def _type_conversion(view: DataView) -> StageDecision | None:
    stored = [c.name for c in view.profile.columns
              if not is_numeric(c) and c.semantic_type in {SemanticType.NUMERIC, SemanticType.DATETIME}]
    if not stored:
        return None
    if view.target and view.target.name in stored and not view.task.classification:
        return (Stage.TYPE_CONVERSION, True,
                f"the target {view.target.name} is numbers stored as text{stray(view.target)}")
    return Stage.TYPE_CONVERSION, False, f"{shortlist(stored)} stored as text"


def _continuous(view: DataView) -> list[ColumnProfile]:
    return [c for c in view.features if is_numeric(c) and c.unique > 2]


def _outlier_handling(view: DataView) -> StageDecision | None:
    n = len(_continuous(view))
    return (Stage.OUTLIER_HANDLING, False, f"{counted(n, 'continuous feature')} may hold extreme values") if n else None


def _scaling(view: DataView) -> StageDecision | None:
    n = len(_continuous(view))
    if not n or not view.task.supervised:
        return None
    return Stage.SCALING, False, f"{counted(n, 'numeric feature')}: linear and distance-based models need one scale"


def _feature_selection(view: DataView) -> StageDecision | None:
    if not view.task.supervised:
        return None
    limit = next((c.value for c in view.constraints if c.kind is ConstraintKind.MAX_FEATURES), None)
    if limit is not None:
        return Stage.FEATURE_SELECTION, True, f"the goal allows at most {limit} features"
    return Stage.FEATURE_SELECTION, False, f"{len(view.features)} features; fewer can be simpler and as accurate"


def _feature_engineering(view: DataView) -> StageDecision | None:
    dates = [c.name for c in view.features if c.semantic_type is SemanticType.DATETIME]
    if not dates or not view.task.supervised or view.task is TaskType.TIME_SERIES_FORECASTING:
        return None
    return Stage.FEATURE_ENGINEERING, False, f"date columns ({shortlist(dates)}) can become year/month/day features"


def _visualisation(view: DataView) -> StageDecision | None:
    said = next((c for c in view.constraints if c.kind is ConstraintKind.VISUALISE), None)
    return (Stage.VISUALISATION, True, f"plots were asked for: {said.reason}") if said else None


#: Stages the data calls for, each rule returning (stage, required, reason) or nothing. Only model tasks run
#: them; exploration just describes the table as it is.
STAGE_RULES: tuple[StageRule, ...] = (
    _imputation, _encoding, _column_filtering, _deduplication, _type_conversion, _outlier_handling, _scaling,
    _feature_selection, _feature_engineering,
)


def plan_stages(view: DataView) -> tuple[list[Stage], list[Stage], dict[str, str]]:
    """Required and optional stages for the task and this data, each with its reason."""
    required = dict(BASE_STAGES[view.task])
    optional = {**_ALWAYS_OPTIONAL, **_EXTRA_OPTIONAL.get(view.task, {})}
    left_out: dict[Stage, str] = {}
    if view.task in _MODEL_TASKS:
        for stage, is_required, reason in filter(None, (rule(view) for rule in STAGE_RULES)):
            (left_out if is_required is None else required if is_required else optional).setdefault(stage, reason)
    chosen = _visualisation(view)
    if chosen:
        required[chosen[0]] = chosen[2]
    optional = {s: r for s, r in optional.items() if s not in required}
    reasons = {f"stage.{s.value}": r for s, r in (*required.items(), *optional.items())}
    reasons |= {f"stage.{s.value}": f"left out: {r}" for s, r in left_out.items() if f"stage.{s.value}" not in reasons}
    return ordered(set(required)), ordered(set(optional)), reasons


def _features(profile: DatasetProfile, target: str | None, task: TaskType) -> list[ColumnProfile]:
    skip = {target, profile.time_column if task is TaskType.TIME_SERIES_FORECASTING else None}
    return [c for c in profile.columns if c.name not in skip and c.semantic_type not in NEVER_FEATURES]


def detect_intent(goal: str, profile: DatasetProfile) -> Intent:
    """Read the task, target, stages and constraints from the goal and the profile, with a reason for each."""
    text = TEMPLATE_MARKUP.sub(" ", goal)  # template expressions are code, never words of the goal
    if not any(w.isalpha() for w in words(text)):
        markup = " It holds only template markup, which dagsmith never runs and which says no task." \
            if text != goal else ""
        raise AmbiguousGoal(vague_goal_question(goal, profile, markup))
    read = read_goal(text, profile)
    explicit, absent = explicit_target(text, profile)
    ruled = {name for c in column_constraints(text, lambda phrase: column_named(phrase, profile)) for name in c.value}
    matches = [m for m in column_matches(read, profile) if m.column not in ruled] or column_matches(read, profile)
    masked = {i for m in matches if m.kind in {MatchKind.EXACT, MatchKind.CLASSES} for i in range(m.start, m.end)}
    named = bool(explicit or absent) or any(m.score >= STRONG_MATCH and m.start < read.features_from for m in matches)
    scores = family_scores(read, masked, named)
    family, task_confidence = choose_family(scores, named, goal, profile)

    reasons = {}
    if read.corrections:
        reasons["spelling"] = "read " + ", ".join(f"'{a}' as '{b}'" for a, b in read.corrections)
    focus = None
    if family is Family.SUPERVISED:
        choice = supervised_target(read, explicit, absent, matches, profile)
        task, why = supervised_type(read, profile, choice.column)
    else:
        choice = TargetChoice(None, 1.0, "none: an unsupervised task works on all the columns")
        task, why = FAMILY_TASK[family], "nothing to predict"
        focus = focus_column(read, matches) if family is Family.EXPLORATION else None
    reasons["target"] = choice.reason
    reasons["task_type"] = f"{task.value.replace('_', ' ')}: {family_evidence(scores, family)}; {why}"
    asked = Constraint(kind=ConstraintKind.FOCUS, value=focus.column,
                       reason=f"the goal asks what goes with {target_reason(focus)}") if focus else None
    return compose_intent(goal, profile, task, choice.column, reasons, task_confidence * choice.confidence,
                          focus=asked)


def compose_intent(goal: str, profile: DatasetProfile, task: TaskType, target: str | None, reasons: dict[str, str],
                   confidence: float, *, focus: Constraint | None = None) -> Intent:
    """The intent for a reading of the goal (by any reasoner): its constraints and the stages the data needs;
    ``focus`` is the column an exploration relates the others to."""
    reasons = dict(reasons)
    constraints = (parse_constraints(goal, task) + ([focus] if focus else [])
                   + column_constraints(goal, lambda phrase: column_named(phrase, profile)))
    for c in constraints:
        several = c.kind in {ConstraintKind.EXCLUDE_FAMILY, ConstraintKind.METRIC}  # one reason per value
        reasons[f"constraint.{c.kind}" + (f".{c.value}" if several else "")] = c.reason
    excluded = set(excluded_columns(constraints, profile.column_names, {target}))
    features = [c for c in _features(profile, target, task) if c.name not in excluded]
    view = DataView(profile, task, profile.column(target) if target else None, features, constraints)
    required, optional, stage_reasons = plan_stages(view)
    return Intent(
        goal=goal, task_type=task, target=target, required_stages=required, optional_stages=optional,
        constraints=constraints, reasons={**reasons, **stage_reasons}, confidence=round(confidence, 3),
    )


def supervised_type(read: Goal, profile: DatasetProfile, target_name: str | None) -> tuple[TaskType, str]:
    """Classification or regression from the target; forecasting when the goal looks ahead along a time column."""
    target = profile.column(target_name) if target_name else None
    task, why = supervised_task(read, target, profile)
    future = _FUTURE.search(" ".join(read.words))
    if not future:
        return task, why
    if profile.time_column and task is TaskType.REGRESSION and target_name != profile.time_column:
        return TaskType.TIME_SERIES_FORECASTING, (
            f"the goal looks ahead ('{future.group(0)}') and '{profile.time_column}' orders the rows in time")
    return task, why + f"; the goal looks ahead ('{future.group(0)}') but " + (
        "there is no time column to forecast along" if not profile.time_column else "the target is not numeric")


def family_evidence(scores: dict[Family, list[tuple[str, float]]], family: Family) -> str:
    said = [phrase for phrase, _ in scores.get(family, [])]
    return f"the goal says {', '.join(repr(s) for s in said)}" if said else "the goal names a column and nothing else"


MIN_ROWS_SUPERVISED = 20
MIN_ROWS_OTHER = 10
SMALL_DATASET = 200
#: A binary minority below this share, or a multiclass class below half its fair share, is imbalanced.
BINARY_MINORITY = 0.3
TARGET_GAPS = 0.05
NEAR_PERFECT = 0.95
#: A classification target with more distinct numbers than this is a quantity, not a set of classes.
MAX_NUMERIC_CLASSES = 20
#: Names of columns usually filled in after the outcome is known (they leak it).
POST_OUTCOME = re.compile(
    r"(date_?closed|closed_?(at|date|on)|refund|cancel+ation_?(reason|date)|churn_?(date|reason)|"
    r"termination_?(date|reason)|exit_?(date|reason)|chargeback|charged_?off|recover(y|ies|ed)|settle(d|ment)|"
    r"payoff|paid_?(off|total|principal|interest|late)|days_?to_?(close|resolution)|final_?(status|result|grade))",
    re.I)


def _error(code: str, message: str) -> IntentIssue:
    return IntentIssue(level=IssueLevel.ERROR, code=code, message=message)


def _warning(code: str, message: str) -> IntentIssue:
    return IntentIssue(level=IssueLevel.WARNING, code=code, message=message)


def validate_intent(intent: Intent, profile: DatasetProfile) -> Intent:
    """Check an intent (from any reasoner) against the data: errors block planning, warnings inform."""
    found = [*_goal_issues(intent), *_size_issues(intent, profile), *_target_issues(intent, profile),
             *_feature_issues(intent, profile), *_leakage_issues(intent, profile), *_metric_issues(intent),
             *_column_issues(intent, profile)]
    return intent.model_copy(update={"issues": intent.issues + [i for i in found if i not in intent.issues]})


def _goal_issues(intent: Intent) -> list[IntentIssue]:
    if intent.goal.strip():
        return []
    return [_error("empty_goal", "The goal is empty: say what you want to learn from the data.")]


def _size_issues(intent: Intent, profile: DatasetProfile) -> list[IntentIssue]:
    supervised = intent.task_type.supervised
    minimum = MIN_ROWS_SUPERVISED if supervised else MIN_ROWS_OTHER
    if profile.n_rows < minimum:
        return [_error("too_few_rows", f"The table has {profile.n_rows} rows; "
                       f"{intent.task_type.value.replace('_', ' ')} needs at least {minimum}.")]
    if profile.n_rows < SMALL_DATASET and intent.task_type is not TaskType.EXPLORATORY_ANALYSIS:
        return [_warning("small_dataset", f"Only {profile.n_rows} rows: results will vary a lot between runs "
                         f"and held-out metrics are rough.")]
    return []


def _target_issues(intent: Intent, profile: DatasetProfile) -> list[IntentIssue]:
    if not intent.task_type.supervised:
        return []
    if intent.target is None:
        return [_error("no_target", "There is no column to predict: the goal names none and the profile found no "
                       "candidate. Say which column to predict, e.g. 'predict <column>'.")]
    target = profile.column(intent.target)
    if target is None:
        return [_error("target_missing", _missing_target_message(intent.target, profile))]
    if target.count == 0:
        return [_error("target_empty", f"'{target.name}' has no values at all ({target.missing} missing): "
                       f"there is nothing to learn from.")]
    if not any(column.count for column in profile.columns if column.name != target.name):
        return [_error("no_features", f"'{target.name}' is the only column with values: there are no features to "
                       f"learn it from. Add the columns that could predict it.")]
    issues = _type_issues(intent.task_type, target)
    if target.missing_ratio >= TARGET_GAPS:
        issues.append(_warning("target_missing_values", f"'{target.name}' is missing in {target.missing} rows "
                               f"({percent(target.missing_ratio)}); those rows cannot be used for training."))
    if intent.task_type.classification and target.unique >= 2:
        issues += _imbalance(target)
    return issues


def _feature_issues(intent: Intent, profile: DatasetProfile) -> list[IntentIssue]:
    """Something to learn from: a column that is not an identifier, free text, a contact detail or constant (nor,
    without a target, a date: dates alone give rows no shape to group or stand out from)."""
    if intent.task_type in {TaskType.EXPLORATORY_ANALYSIS, TaskType.TIME_SERIES_FORECASTING}:
        return []
    others = [c for c in profile.columns if c.name != intent.target and c.count]
    unusable = NEVER_FEATURES if intent.task_type.supervised else NEVER_FEATURES | {SemanticType.DATETIME}
    if not others or any(c.semantic_type not in unusable and c.unique > 1 for c in others):
        return []
    listed = shortlist([f"{c.name} ({'constant' if c.unique <= 1 else KIND_NAMES[c.semantic_type]})" for c in others])
    aim = f"predict '{intent.target}' from" if intent.target else "learn from"
    return [_error("no_features", f"There is nothing to {aim}: every column is an identifier, free text, a contact "
                   f"detail{'' if intent.target else ', a date'} or constant ({listed}). Add columns that measure or "
                   f"describe the rows.")]


def _column_issues(intent: Intent, profile: DatasetProfile) -> list[IntentIssue]:
    """Columns the goal rules in or out must exist, and must leave the target and a feature to learn from."""
    issues = []
    for constraint in intent.constraints:
        if constraint.kind in {ConstraintKind.EXCLUDE_COLUMNS, ConstraintKind.ONLY_COLUMNS}:
            issues += [_error("column_missing", _missing_target_message(name, profile))
                       for name in constraint.value if profile.column(name) is None]
    excluded = excluded_columns(intent.constraints, profile.column_names, set())
    if intent.target in excluded and any(c.kind is ConstraintKind.EXCLUDE_COLUMNS for c in intent.constraints):
        issues.append(_error("target_excluded", f"The goal leaves out '{intent.target}', the column it asks to "
                             f"predict. Say which column to predict, or keep it in."))
    if intent.target and not set(profile.column_names) - set(excluded) - {intent.target}:
        issues.append(_error("no_features", "The goal leaves out every column but the target: there is nothing "
                             "left to learn from."))
    return issues


def _missing_target_message(name: str, profile: DatasetProfile) -> str:
    by_letters = {"".join(words(c)): c for c in profile.column_names}
    close = difflib.get_close_matches("".join(words(name)), list(by_letters), n=3, cutoff=0.5)
    closest = f" The closest names are {', '.join(by_letters[c] for c in close)}." if close else ""
    shown = profile.column_names[:25]
    more = f" and {len(profile.column_names) - 25} more" if len(profile.column_names) > 25 else ""
    return f"There is no column '{name}' in the data.{closest} The columns are: {', '.join(shown)}{more}."


def _type_issues(task: TaskType, target: ColumnProfile) -> list[IntentIssue]:
    if target.semantic_type in UNPREDICTABLE:
        kind = KIND_NAMES[target.semantic_type] + (", a different value on nearly every row"
                                                   if target.semantic_type is SemanticType.ID else "")
        return [_error("target_unusable", f"'{target.name}' holds {kind} ({class_list(target, 3)}): nothing a "
                       f"model can learn to predict. Name the column whose value you want predicted.")]
    if task.supervised and not task.classification and not holds_numbers(target):
        return [_error("target_not_numeric", f"Regression needs a numeric target, but '{target.name}' is "
                       f"{target.semantic_type.value} ({class_list(target)}). Ask to classify it instead.")]
    if not task.classification:
        return []
    if target.unique == 1:
        return [_error("single_class", f"'{target.name}' has a single class ('{class_list(target)}'): there is "
                       f"nothing to tell apart.")]
    if holds_numbers(target) and target.unique > MAX_NUMERIC_CLASSES:
        return [_error("target_not_categorical", f"Classification needs classes, but '{target.name}' is a number "
                       f"with {target.unique} distinct values. Ask for regression, or bin it into classes first.")]
    if task is TaskType.BINARY_CLASSIFICATION and target.unique > 2:
        return [_error("not_binary", f"Binary classification needs two classes; '{target.name}' has {target.unique}.")]
    return []


def _imbalance(target: ColumnProfile) -> list[IntentIssue]:
    """The smallest class against its fair share. Classes beyond the profile's top values share what is left, so
    the smallest of them holds at most that remainder split evenly: still enough to warn."""
    shown = target.top_values
    hidden = target.unique - len(shown)
    remainder = target.count - sum(v.count for v in shown)
    sizes = [(float(v.count), f"'{v.value}'") for v in shown]
    if hidden > 0:
        sizes.append((remainder / hidden, "a class beyond the profile's top values"))
    if not sizes:
        return []
    smallest, name = min(sizes)
    share = smallest / target.count
    if share >= (BINARY_MINORITY if target.unique == 2 else 0.5 / target.unique):
        return []
    return [_warning("class_imbalance", f"'{target.name}' is imbalanced: the smallest class ({name}) holds "
                     f"{percent(share)} of the rows; accuracy will flatter the model, prefer balanced metrics.")]


def _leakage_issues(intent: Intent, profile: DatasetProfile) -> list[IntentIssue]:
    """Columns that would let a model cheat: identifiers, near-copies of the target, values known only afterwards."""
    if not intent.task_type.supervised or not intent.target or profile.column(intent.target) is None:
        return []
    target = intent.target
    return [
        _warning("leakage_suspect", message)
        for rule in (_identifiers, _near_copies, _after_outcome)
        for message in rule(profile, target)
    ]


def _identifiers(profile: DatasetProfile, target: str) -> Iterable[str]:
    for c in profile.columns:
        if c.semantic_type is SemanticType.ID and c.name != target:
            yield (f"'{c.name}' looks like an identifier (unique per row): it carries no signal and can leak how "
                   f"rows were collected; it should not be a feature.")


def _near_copies(profile: DatasetProfile, target: str) -> Iterable[str]:
    for corr in profile.correlations:
        other = corr.b if corr.a == target else corr.a if corr.b == target else None
        if other and abs(corr.value) >= NEAR_PERFECT:
            yield (f"'{other}' predicts '{target}' almost perfectly ({corr.method} {corr.value:.2f}): check it is "
                   f"known before the outcome.")
    for group in profile.near_identical_columns:
        if target in group:
            yield f"{', '.join(c for c in group if c != target)} nearly duplicates the target '{target}'."


def _after_outcome(profile: DatasetProfile, target: str) -> Iterable[str]:
    for c in profile.columns:
        if c.name != target and POST_OUTCOME.search(c.name):
            yield (f"'{c.name}' sounds like it is recorded after the outcome; if so it leaks the answer and must not "
                   f"be a feature.")


def _metric_issues(intent: Intent) -> list[IntentIssue]:
    fits = METRICS_FOR.get(intent.task_type, set())
    task = intent.task_type.value.replace("_", " ")
    return [
        _warning("metric_mismatch", f"The metric '{c.value}' does not fit {task}; the evaluator's default metrics "
                 f"are used instead.")
        for c in intent.constraints if c.kind is ConstraintKind.METRIC and c.value not in fits
    ]
