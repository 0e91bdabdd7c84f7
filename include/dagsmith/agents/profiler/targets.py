"""Target candidates: every column scored as what the user may want to predict (lambda1 * name + lambda2 *
distribution + lambda3 * temporal), and the time column rows are ordered by."""

from __future__ import annotations

import pandas as pd

from dagsmith.agents.profiler.common import MAX_LEVELS, S, integral, is_numeric, percent, ratio, tokens
from dagsmith.agents.profiler.semantic import DATE_WORDS, NOT_TARGETS
from dagsmith.models.catalog import TaskType
from dagsmith.models.profile import ColumnProfile, TargetCandidate

#: lambda1 (name), lambda2 (distribution), lambda3 (temporal) of the target score.
TARGET_WEIGHTS = (0.5, 0.35, 0.15)
#: Target-like names: exact names score the full weight, a word inside a longer name 70% of it.
TARGET_WORDS = {
    **dict.fromkeys(
        ["target", "label", "outcome", "response", "result", "churn", "churned", "fraud", "fraudulent", "default",
         "defaulted", "survived", "survival", "diagnosis", "species", "attrition", "progression", "cultivar",
         "status", "approved", "converted", "readmitted", "spam", "sentiment", "disease"], 1.0),
    **dict.fromkeys(
        ["price", "saleprice", "sales", "revenue", "cost", "charges", "value", "strength", "quality", "grade",
         "score", "rating", "income", "salary", "yield", "demand"], 0.75),
    **dict.fromkeys(["category", "segment", "group", "kind", "region", "variety"], 0.4),
}
#: Too generic inside longer names ('MS_SubClass', 'x'/'y' coordinates): they count only as the whole name.
EXACT_TARGET_WORDS = {"class", "y"}
OUTCOME_WORDS = {
    "next", "future", "final", "after", "later", "eventual", "subsequent", "outcome", "result", "response",
    "progression", "followup",
}


def target_candidates(columns: list[ColumnProfile], sample: pd.DataFrame) -> list[TargetCandidate]:
    """Every plausible target, best first; confidence is the score's share among the top five."""
    names = {column.name.lower() for column in columns}
    last = max(len(columns) - 1, 1)
    scored = [_candidate(column, index / last, names, sample[column.name]) for index, column in enumerate(columns)]
    candidates = sorted((c for c in scored if c), key=lambda candidate: candidate.score, reverse=True)
    top = sum(candidate.score for candidate in candidates[:5])
    for candidate in candidates:
        candidate.confidence = round(ratio(candidate.score, top), 4)
    return candidates


def _candidate(column: ColumnProfile, position: float, names: set[str], series: pd.Series) -> TargetCandidate | None:
    distribution, task, distribution_reason = _distribution_score(column, series)
    if not distribution:
        return None
    name, name_reason = _name_score(column.name, names)
    temporal, temporal_reason = _temporal_score(column.name, position)
    weight_name, weight_distribution, weight_temporal = TARGET_WEIGHTS
    return TargetCandidate(
        column=column.name,
        score=round(weight_name * name + weight_distribution * distribution + weight_temporal * temporal, 4),
        confidence=0.0,
        name_score=name,
        distribution_score=round(distribution, 4),
        temporal_score=round(temporal, 4),
        suggested_task=task,
        reasons=[reason for reason in (name_reason, distribution_reason, temporal_reason) if reason],
    )


def _name_score(name: str, names: set[str]) -> tuple[float, str]:
    """1 for names like 'target' or 'churn', 0.75 for quantities like 'price', 70% of that inside longer names."""
    words = tokens(name)
    whole = "".join(words)
    if whole in EXACT_TARGET_WORDS and not (whole == "y" and "x" in names):  # x beside y are coordinates
        return 1.0, f"'{name}' is a conventional target name"
    if whole in TARGET_WORDS:
        return TARGET_WORDS[whole], f"'{name}' is a typical target name"
    inside = max((TARGET_WORDS.get(word, 0.0) for word in words), default=0.0) * 0.7
    question = 0.6 if len(words) > 1 and words[0] in ("is", "has") else 0.0
    if not (inside or question):
        return 0.0, ""
    if question >= inside:
        return question, f"'{name}' asks a yes/no question"
    return round(inside, 4), f"'{name}' contains a typical target word"


def _distribution_score(column: ColumnProfile, series: pd.Series) -> tuple[float, TaskType | None, str]:
    """Binary columns look most like targets, then few classes, then continuous numbers; ids, text, dates, constants
    not at all. Missing values scale the score down."""
    kind, levels = column.semantic_type, column.unique
    if kind in NOT_TARGETS or levels < 2:
        return 0.0, None, ""
    if levels == 2:
        score, task, reason = 1.0, TaskType.BINARY_CLASSIFICATION, f"two classes ({_class_mix(column)})"
    elif kind in (S.CATEGORICAL, S.BOOLEAN) or (is_numeric(series) and levels <= 10 and integral(series)):
        score = 0.9 if levels <= 10 else 0.8 if levels <= 20 else 0.5 if levels <= MAX_LEVELS else 0.1
        task, reason = TaskType.MULTICLASS_CLASSIFICATION, f"{levels} classes ({_class_mix(column)})"
    else:
        score, task, reason = 0.7, TaskType.REGRESSION, f"continuous numbers ({levels:,} distinct values)"
    if column.missing:
        reason += f"; {percent(column.missing_ratio)} missing"
    return score * (1 - column.missing_ratio), task, reason


def _class_mix(column: ColumnProfile) -> str:
    shown = ", ".join(f"{value.value} {percent(ratio(value.count, column.count))}" for value in column.top_values[:3])
    return shown + (", ..." if column.unique > 3 else "")


def _temporal_score(name: str, position: float) -> tuple[float, str]:
    """Outcomes come last (or, by another convention, first) and may be named for what happens later."""
    if set(tokens(name)) & OUTCOME_WORDS:
        return 1.0, "the name describes an outcome"
    if position == 1:
        return 1.0, "last column"
    if position == 0:
        return 0.6, "first column"
    return round(0.3 * position, 4), ""


#: Names of a number that counts time (a year, or a decimal year as R's time series store it).
TIME_INDEX_WORDS = DATE_WORDS | {"year", "yr", "month", "quarter", "period", "week"}
#: The years such a number spans: a calendar year, whole or decimal.
YEAR_RANGE = (1000.0, 2300.0)


def time_column(columns: list[ColumnProfile]) -> str | None:
    """The date/time column to order rows by: one named like a date first, then the one with most distinct values;
    without one, a time index: a number named for time that holds a different year on every row."""
    dates = [column for column in columns if column.semantic_type is S.DATETIME and column.count]
    best = max(dates, key=lambda column: (bool(set(tokens(column.name)) & DATE_WORDS), column.unique), default=None)
    if best is None:
        best = next((column for column in columns if _time_index(column)), None)
    return best.name if best else None


def _time_index(column: ColumnProfile) -> bool:
    low, high = YEAR_RANGE
    return (column.semantic_type in {S.NUMERIC, S.ID} and bool(set(tokens(column.name)) & TIME_INDEX_WORDS)
            and column.count > 1 and column.unique == column.count and isinstance(column.min, int | float)
            and isinstance(column.max, int | float) and low <= column.min and column.max <= high)
