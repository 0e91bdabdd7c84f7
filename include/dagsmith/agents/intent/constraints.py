"""Limits a goal states in words: a time budget, interpretability, models asked for or ruled out, a cap on features,
metrics, a number of clusters or components, a share of rows to flag, deduplication, plots, and which analyses an
exploration runs. Each becomes a typed constraint with the words it was read from.
"""

from __future__ import annotations

import re

from dagsmith.agents.intent.lexicon import CLAUSE_BREAKS, NEGATIONS
from dagsmith.agents.intent.model_mentions import mentions
from dagsmith.errors import InputError
from dagsmith.models.catalog import TaskType
from dagsmith.models.intent import Constraint, ConstraintKind, Count, Flag, Horizon, Name, Names, Share
from dagsmith.text import stem, words
from dagsmith_kit.metrics import METRICS as KIT_METRICS

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
    r"\b(explainable|explainability|interpretable|interpretability|transparent|transparency|"
    r"white box|glass box|auditable|understandable|human readable|simple rules|regulators?|compliance|"
    # "explain"/"interpret" ask for a readable model when said of the model or to people ("a model I can explain",
    # "explain it to HR", "explain the rules"); "explain life expectancy from GDP" asks what drives a column, which
    # the explanation step answers for any model.
    r"(?:can|could|able to|easy to|simple to|need to|must|should|have to)\s+(?:explain|interpret)|"
    r"(?:explain|interpret)(?:\w*)\s+(?:(?:it|them|this|that|the|its|their|our|my|each)\s+)?"
    r"(?:to|it|them|rules?|models?|predictions?|decisions?|results?|outputs?|why|how)\b)"
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
#: Which metrics make sense for which task (a goal asking for recall on a regression gets a warning).
METRICS_FOR: dict[TaskType, set[str]] = {
    task: named for task in TaskType
    if (named := {name for name, metric in KIT_METRICS.items() if metric.nameable and task.value in metric.tasks})}
_N_CLUSTERS = re.compile(
    r"\b" + _NUMBER + r"\s+(?:\w+\s+)?(?:clusters?|groups?|segments?|personas?|cohorts?)\b|\bk (\d+)\b")
_N_COMPONENTS = re.compile(r"\b" + _NUMBER + r"\s*(?:d|dimensions?|dims?|components?|axes)\b")
#: a share of the rows: "the top 2%", "about 1 percent of the transactions", "0.5 % most unusual"
_SHARE = re.compile(r"\b(\d+(?:\.\d+)?)\s*(?:%|percent\b|per cent\b)")
_HORIZON_UNIT = r"(hours?|days?|weeks?|months?|quarters?|years?|decades?|steps?|periods?)"
#: how far ahead a forecast looks: "for the next 12 months", "the coming year", "30 trading days ahead"
_HORIZON = re.compile(r"\b(?:next|coming|following|upcoming)\s+(?:" + _NUMBER + r"\s+)?(?:\w+\s+)?" + _HORIZON_UNIT
                      + r"\b|\b" + _NUMBER + r"\s+(?:\w+\s+)?" + _HORIZON_UNIT + r"\s+(?:ahead|out|forward|from now)\b")
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
            *_deduplication_request(text), *_analyses(text, task), *_horizon(text, task)]


def _horizon(text: str, task: TaskType) -> list[Constraint]:
    """How far ahead a forecast looks, in the goal's own unit of time; a plural unit without a count ("the coming
    decades") says no horizon."""
    said = _HORIZON.search(text) if task is TaskType.TIME_SERIES_FORECASTING else None
    if not said:
        return []
    count, unit = (said.group(1), said.group(2)) if said.group(2) else (said.group(3), said.group(4))
    if count is None and unit.endswith("s"):
        return []
    value = _number(count) if count else 1
    unit = unit.removesuffix("s")
    if unit == "decade":
        value, unit = value * 10, "year"
    return [Horizon(kind=ConstraintKind.HORIZON, value=max(1, round(value)),
                    unit="step" if unit == "period" else unit, reason=f"the goal says '{said.group(0)}'")]


def _anomaly_share(goal: str, task: TaskType) -> list[Constraint]:
    """The share of rows to flag, read from the goal as written (word splitting drops the percent sign)."""
    share = _SHARE.search(goal)
    if not share or task is not TaskType.ANOMALY_DETECTION or not 0 < float(share.group(1)) <= 50:
        return []
    return [Share(kind=ConstraintKind.ANOMALY_FRACTION, value=float(share.group(1)) / 100,
                       reason=f"the goal says '{share.group(0)}'")]


def _time_budget(text: str) -> list[Constraint]:
    found = _TIME.search(text)
    if found:
        amount, unit = found.group(1), found.group(2)
        value = 0.5 if amount.startswith("half") else _number(amount)
        seconds = int(value * _UNIT_SECONDS[unit[0]])
        return [_count(ConstraintKind.TIME_BUDGET, seconds, found.group(0))]
    quick = _QUICK.search(text)
    if quick:
        return [Count(kind=ConstraintKind.TIME_BUDGET, value=QUICK_BUDGET_SECONDS,
                           reason=f"'{quick.group(0)}' read as a {QUICK_BUDGET_SECONDS // 60}-minute budget")]
    return []


_COUNTED = {ConstraintKind.TIME_BUDGET: "seconds", ConstraintKind.MAX_FEATURES: "features",
            ConstraintKind.N_CLUSTERS: "clusters", ConstraintKind.N_COMPONENTS: "components"}


def _count(kind: ConstraintKind, value: int, said: str) -> Count:
    """A count the goal states; none below one can be met, so the goal is refused saying which words ask for it."""
    if value < 1:
        raise InputError(f"the goal says '{said}', which is {value} {_COUNTED[kind]}: no pipeline can meet that; "
                         "ask for at least 1")
    return Count(kind=kind, value=value, reason=f"the goal says '{said}'")


def _ruled_out(text: str, at: int) -> bool:
    """Whether a negation governs the words at ``at``: "no neural nets", "without deep learning or boosting", but
    not "no neural nets and random forests are fine" (a new clause starts at "and")."""
    before = words(text[:at])
    clause = before[max((i + 1 for i, w in enumerate(before) if w in CLAUSE_BREAKS), default=0):]
    return any(stem(w) in NEGATIONS for w in clause[-4:])


def _interpretability(text: str) -> list[Constraint]:
    black_box = _BLACK_BOX.search(text)
    if black_box and _ruled_out(text, black_box.start()):
        return [Flag(kind=ConstraintKind.INTERPRETABLE, value=True,
                           reason=f"the goal rules out black boxes ('{black_box.group(0)}')")]
    said = next((m for m in _INTERPRETABLE.finditer(text) if not _ruled_out(text, m.start())), None)
    if not said:
        return []
    return [Flag(kind=ConstraintKind.INTERPRETABLE, value=True, reason=f"the goal says '{said.group(0)}'")]


def _model_requests(text: str) -> list[Constraint]:
    """Models the goal rules out (their whole family) and the ones it asks for, each read from the names."""
    excluded: dict[str, str] = {}
    requested: dict[str, str] = {}
    for mention in mentions(text):
        if _ruled_out(text, mention.start):
            excluded.setdefault(mention.name.family, mention.said)
        else:
            requested.setdefault(mention.label, mention.said)
    found = [Name(kind=ConstraintKind.EXCLUDE_FAMILY, value=family, reason=f"the goal rules out '{said}'")
             for family, said in excluded.items()]
    if requested:
        said = ", ".join(f"'{s}'" for s in requested.values())
        found.append(Names(kind=ConstraintKind.MODEL, value=list(requested), reason=f"the goal asks for {said}"))
    return found


def _max_features(text: str) -> list[Constraint]:
    found = _MAX_FEATURES.search(text)
    if not found:
        return []
    limit = int(_number(found.group(2))) - (1 if found.group(1) in {"fewer than", "less than"} else 0)
    return [_count(ConstraintKind.MAX_FEATURES, limit, found.group(0))]


def _metrics(text: str) -> list[Constraint]:
    hits = sorted((m.start(), name, m.group(0)) for name, pattern in METRICS.items() if (m := re.search(pattern, text)))
    return [Name(kind=ConstraintKind.METRIC, value=name, reason=f"the goal mentions '{said}'")
            for _, name, said in hits]


def _shape_requests(text: str, task: TaskType) -> list[Constraint]:
    found = []
    clusters = _N_CLUSTERS.search(text)
    if clusters and task is TaskType.CLUSTERING:
        count = int(_number(clusters.group(1) or clusters.group(2)))
        found.append(_count(ConstraintKind.N_CLUSTERS, count, clusters.group(0)))
    components = _N_COMPONENTS.search(text)
    if components and task in {TaskType.DIMENSIONALITY_REDUCTION, TaskType.CLUSTERING}:
        found.append(_count(ConstraintKind.N_COMPONENTS, int(_number(components.group(1))), components.group(0)))
    visual = _VISUALISE.search(text)
    if visual:
        found.append(Flag(kind=ConstraintKind.VISUALISE, value=True, reason=f"the goal says '{visual.group(0)}'"))
    return found


def _analyses(text: str, task: TaskType) -> list[Constraint]:
    """The analyses an exploratory goal names ("distributions, correlations and outliers"); none named: all run."""
    if task is not TaskType.EXPLORATORY_ANALYSIS:
        return []
    named = {name: found.group(0) for name, pattern in ANALYSIS_WORDS.items() if (found := pattern.search(text))}
    if not named:
        return []
    said = ", ".join(f"'{word}'" for word in named.values())
    return [Names(kind=ConstraintKind.ANALYSES, value=list(named), reason=f"the goal asks for {said}")]


def _deduplication_request(text: str) -> list[Constraint]:
    said = next((m for m in _DEDUPLICATE.finditer(text) if not _ruled_out(text, m.start())), None)
    if not said:
        return []
    return [Flag(kind=ConstraintKind.DEDUPLICATE, value=True, reason=f"the goal says '{said.group(0)}'")]
