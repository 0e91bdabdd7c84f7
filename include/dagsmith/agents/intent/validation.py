"""Whether an intent, from any reasoner, makes sense for the data: errors that block planning (no target, too few
rows, a target no model can predict, nothing to learn from) and warnings that inform (imbalance, leakage, a metric that
does not fit the task).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from dagsmith.agents.intent.column_requests import excluded_columns
from dagsmith.agents.intent.columns import KIND_NAMES, NEVER_FEATURES, UNPREDICTABLE, holds_numbers
from dagsmith.agents.intent.constraints import METRICS_FOR
from dagsmith.agents.intent.lexicon import STOPWORDS
from dagsmith.agents.intent.mentions import absent_column_names, explicit_target
from dagsmith.agents.intent.wording import class_list, percent, shortlist
from dagsmith.agents.repeats import RECORD_ID_UNIQUE, entity_column
from dagsmith.models.catalog import TaskType
from dagsmith.models.intent import ConstraintKind, Intent, IntentIssue, IssueLevel
from dagsmith.models.profile import ColumnProfile, DatasetProfile, SemanticType
from dagsmith.text import words

MIN_ROWS_SUPERVISED = 20
MIN_ROWS_OTHER = 10
SMALL_DATASET = 200
#: A binary minority below this share, or a multiclass class below half its fair share, is imbalanced.
BINARY_MINORITY = 0.3
TARGET_GAPS = 0.05
NEAR_PERFECT = 0.95
#: A classification target with more distinct numbers than this is a quantity, not a set of classes.
MAX_NUMERIC_CLASSES = 20
#: Columns offered for a name the table lacks, and how alike one of their words must be to one of the name's.
CLOSEST_COLUMNS = 3
CLOSE_WORDS = 0.6
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
    read = _read_from_words(intent.target, intent.goal, profile)
    if target is None:
        return [_error("target_missing", missing_column_message(intent.target, profile, read=read))]
    if target.count == 0:
        return [_error("target_empty", f"'{target.name}' has no values at all ({target.missing} missing): "
                       f"there is nothing to learn from.")]
    if not any(column.count for column in profile.columns if column.name != target.name):
        return [_error("no_features", f"'{target.name}' is the only column with values: there are no features to "
                       f"learn it from. Add the columns that could predict it.")]
    issues = type_issues(intent.task_type, target, read=read)
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
            issues += [_error("column_missing", missing_column_message(name, profile))
                       for name in constraint.value if profile.column(name) is None]
    excluded = excluded_columns(intent.constraints, profile.column_names, set())
    if intent.target in excluded and any(c.kind is ConstraintKind.EXCLUDE_COLUMNS for c in intent.constraints):
        issues.append(_error("target_excluded", f"The goal leaves out '{intent.target}', the column it asks to "
                             f"predict. Say which column to predict, or keep it in."))
    if intent.target and not set(profile.column_names) - set(excluded) - {intent.target}:
        issues.append(_error("no_features", "The goal leaves out every column but the target: there is nothing "
                             "left to learn from."))
    return issues


def missing_column_message(name: str, profile: DatasetProfile, *, read: bool = False) -> str:
    """That ``name`` is no column, with the columns spelled most like it and the columns there are; ``read``: a name
    the reader took from the goal's words, not one the person wrote as a column's ("what level will a *student*
    reach"), said as the reading it is rather than put in the person's mouth."""
    close = closest_columns(name, profile)
    closest = f" The closest names are {', '.join(close)}." if close else ""
    more = f" and {len(profile.column_names) - 25} more" if len(profile.column_names) > 25 else ""
    opening = (f"The goal reads as asking to predict '{name}', but no column is called that." if read
               else f"There is no column '{name}' in the data.")
    return f"{opening}{closest} The columns are: {', '.join(profile.column_names[:25])}{more}."


def _read_from_words(name: str, goal: str, profile: DatasetProfile) -> bool:
    """Whether the target is the reader's reading of the goal's words rather than a name the person gave: designated
    ("target is x"), written as the column is called, or, for one the table lacks, written the way columns are."""
    match, absent = explicit_target(goal, profile)
    if name in (absent, match.column if match else None):
        return False
    if profile.column(name) is None:
        return name not in absent_column_names(goal, profile)
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", goal, re.IGNORECASE) is None


def closest_columns(name: str, profile: DatasetProfile) -> list[str]:
    """Up to ``CLOSEST_COLUMNS`` columns spelled most like ``name``, word by word ("colour_of_the_moon" is closest to
    color_index by "colour"), then as a whole; none that shares no word nearly with it."""
    said = [w for w in words(name) if w not in STOPWORDS] or words(name)

    def likeness(column: str) -> tuple[float, float]:
        by_word = max((difflib.SequenceMatcher(None, a, b).ratio() for a in said for b in words(column)), default=0.0)
        return by_word, difflib.SequenceMatcher(None, "".join(said), "".join(words(column))).ratio()

    ranked = sorted(profile.column_names, key=likeness, reverse=True)
    return [column for column in ranked[:CLOSEST_COLUMNS] if likeness(column)[0] >= CLOSE_WORDS]


def type_issues(task: TaskType, target: ColumnProfile, *, read: bool = False) -> list[IntentIssue]:
    """Why ``target`` cannot be predicted as ``task`` asks, if it cannot; ``read``: a target the reader took from the
    goal's words (``missing_column_message``), whose refusal says so."""
    if target.semantic_type in UNPREDICTABLE:
        kind = KIND_NAMES[target.semantic_type] + (", a different value on nearly every row"
                                                   if target.semantic_type is SemanticType.ID else "")
        said = f"The goal reads as asking to predict '{target.name}', which holds" if read else \
            f"'{target.name}' holds"
        return [_error("target_unusable", f"{said} {kind} ({class_list(target, 3)}): nothing a model can learn to "
                       f"predict. Name the column whose value you want predicted.")]
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
    entity = entity_column(profile, target)
    for c in profile.columns:
        if entity and c.name == entity[0]:
            yield (f"'{c.name}' identifies an entity with about {entity[1]:.1f} rows each: it should not be a feature, "
                   f"and a random split would test the model on the very '{c.name}' values it learned from, so the "
                   "group split keeps each one's rows on one side.")
        elif c.semantic_type is SemanticType.ID and c.name != target:
            unique = " (unique per row)" if c.unique_ratio >= RECORD_ID_UNIQUE else ""
            yield (f"'{c.name}' looks like an identifier{unique}: it carries no signal and can leak how "
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
