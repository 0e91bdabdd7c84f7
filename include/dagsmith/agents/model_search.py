"""The modelling stage's search: which models are fitted side by side, for how long, and what picks the winner.

One default model is a guess. The builder turns the modelling step of a supervised pipeline into a search: the
top-ranked model and the next ones that fit the data as well (by the recommender's compatibility signal) each
tune themselves within a share of the pipeline's budget, scored on the training rows only, and the best
validation score wins (``execution.search``), or a weighted average of them when that validates better. Each
candidate's search starts from the configurations that won on the most similar tables, in the portfolio shipped with
the kit and in this deployment's own runs (``dagsmith_kit.portfolio``). A person's explicit choice is honoured: their
model alone is tuned; a goal that asks for a kind of model gets one model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dagsmith.models.catalog import Stage, TaskType
from dagsmith.models.intent import ConstraintKind, Intent, find_constraint
from dagsmith.models.plan import ModelSearch, StageRecommendation
from dagsmith.models.profile import DatasetProfile
from dagsmith_kit.metrics import METRICS
from dagsmith_kit.portfolio import Table, Winner, nearest

#: Models fitted side by side at most (the recommender's order).
MAX_CANDIDATES = 3
#: An alternative joins the search when its compatibility with the data is at least this share of the top pick's,
#: or this lower share when it is of a family no candidate is (a linear model's usual strength is 0.85 of the best).
COMPATIBLE_SHARE, OTHER_FAMILY_SHARE = 0.9, 0.8
#: The default search budget: seconds for a small table, one more per this many cells, and the bounds.
BASE_SECONDS, CELLS_PER_SECOND, MIN_SECONDS, MAX_SECONDS = 10.0, 5_000, 15.0, 300.0
#: The share of a goal's stated time budget the search may take (loading, preparing and evaluating need the rest).
SEARCH_SHARE_OF_GOAL = 0.6
#: What candidates are compared by when the goal names no metric. Classes are compared by ROC AUC (each class against
#: the rest when there are several): how well a model ranks every class, whatever the threshold. Macro F1 of the
#: predicted labels rewards giving up accuracy on the common classes for the rare ones; log loss punishes an
#: overconfident model so hard that a short search can find nothing better than the class prior.
DEFAULT_METRIC = {TaskType.BINARY_CLASSIFICATION: "roc_auc", TaskType.MULTICLASS_CLASSIFICATION: "roc_auc",
                  TaskType.REGRESSION: "r2", TaskType.TIME_SERIES_FORECASTING: "r2"}
#: Where a remembered configuration comes from (``Winner.source``), as the plan's reason says it.
SOURCES = {"portfolio": "the portfolio", "history": "this deployment's runs"}
#: Metrics that weigh a rare class as much as a common one (see ``class_weighting``).
CLASS_BALANCED_METRICS = frozenset(name for name, metric in METRICS.items() if metric.class_balanced)


def budget(profile: DatasetProfile, intent: Intent, configured: float | None) -> tuple[float, str]:
    """The whole search's seconds and why: the goal's time budget, else the operator's setting, else the data's size."""
    stated = find_constraint(intent.constraints, ConstraintKind.TIME_BUDGET)
    if stated:
        seconds = max(3.0, float(stated.value) * SEARCH_SHARE_OF_GOAL)
        return seconds, f"{SEARCH_SHARE_OF_GOAL:.0%} of the goal's time budget ({stated.reason})"
    if configured:
        return configured, "DAGSMITH_SEARCH_SECONDS"
    cells = profile.n_rows * max(1, len(profile.columns))
    seconds = min(MAX_SECONDS, max(MIN_SECONDS, BASE_SECONDS + cells / CELLS_PER_SECOND))
    return seconds, f"sized to the table ({cells:,} cells)"


def metric(intent: Intent) -> tuple[str, str]:
    named = find_constraint(intent.constraints, ConstraintKind.METRIC)
    if named:
        return str(named.value), named.reason
    chosen = DEFAULT_METRIC[intent.task_type]
    return chosen, f"the usual measure for {intent.task_type.value.replace('_', ' ')}"


def class_weighting(intent: Intent) -> str | None:
    """Why training weighs imbalanced classes equally, or None when it should not. Weighting skews a model's
    probabilities towards the rare classes (worse log loss and accuracy, often a worse ranking), so it is worth it
    only when the metric weighs a rare class as much as a common one."""
    if not intent.task_type.classification:
        return None
    measure = metric(intent)[0]
    imbalanced = any(issue.code == "class_imbalance" for issue in intent.issues)
    return (f"the classes are imbalanced and {measure} weighs the rare ones as much as the common"
            if imbalanced and measure in CLASS_BALANCED_METRICS else None)


def candidates(ranking: StageRecommendation, pick: str, chosen_by: str,
               takes: Callable[[str], bool] = lambda name: True,
               family: Callable[[str], str | None] = lambda name: None) -> list[str]:
    """The pick first, then the best model of another family (``family``) that fits the data nearly as well, then
    the models that fit the data best (compatibility weighs an estimator's usual strength on tables this size), each
    at least about as well as the pick and, by ``takes``, able to read the data as the pipeline prepares it. Another
    family comes first because a blend gains most from members whose errors differ: a linear model beside boosted
    trees often beats either, where two tree ensembles blended rarely beat the better one."""
    if chosen_by == "user":
        return [pick]
    fit = {c.microservice: c.signals.compatibility for c in ranking.candidates}
    others = [c.microservice for c in sorted(
        (c for c in ranking.candidates if c.microservice != pick and takes(c.microservice)),
        key=lambda c: (-c.signals.compatibility, -c.score))]
    kin = family(pick)
    unlike = next((name for name in others if family(name) not in (None, kin)
                   and fit[name] >= fit.get(pick, 0.0) * OTHER_FAMILY_SHARE), None)
    floor = fit.get(pick, 0.0) * COMPATIBLE_SHARE
    alike = [name for name in others if name != unlike and fit[name] >= floor]
    return [pick, *([unlike] if unlike else []), *alike][:MAX_CANDIDATES]


def table_of(profile: DatasetProfile, intent: Intent) -> Table:
    """The meta-features a configuration's fit to a table is judged by: the task, rows, feature columns and their
    share of categories."""
    return Table.of_columns(intent.task_type.value, profile.n_rows,
                            [c.dtype for c in profile.columns if c.name != intent.target])


def warm_starts(names: list[str], table: Table, winners: Sequence[Winner]) -> tuple[dict[str, list[dict]], str]:
    """Per candidate, the configurations that won on the tables nearest this one, and a sentence on where from."""
    found = {name: nearest(winners, name, table) for name in names}
    sources = {w.source for chosen in found.values() for w in chosen}
    if not sources:
        return {}, ""
    where = " and ".join(said for source, said in SOURCES.items() if source in sources)
    return ({name: [w.params for w in chosen] for name, chosen in found.items() if chosen},
            f"; each starts from the configurations that won on the most similar tables ({where})")


def plan_search(stage: Stage, ranking: StageRecommendation | None, pick: str, chosen_by: str,
                profile: DatasetProfile, intent: Intent, configured_seconds: float | None,
                params_of: Callable[[str], dict[str, Any]],
                takes: Callable[[str], bool] = lambda name: True, winners: Sequence[Winner] = (),
                family: Callable[[str], str | None] = lambda name: None) -> ModelSearch | None:
    """The search for a supervised modelling step (``params_of`` infers a candidate's params, ``takes`` says
    whether a candidate reads the data as prepared, ``winners`` are the configurations that won before, ``family``
    names a candidate's model family), or None for any other step."""
    if stage is not Stage.MODELLING or intent.task_type not in DEFAULT_METRIC or ranking is None:
        return None
    names = candidates(ranking, pick, chosen_by, takes, family)
    total, why_budget = budget(profile, intent, configured_seconds)
    measure, why_metric = metric(intent)
    each = max(1.0, round(total / len(names), 1))
    kinds = len({family(name) or name for name in names})
    who = ("your choice, tuned" if chosen_by == "user" else f"{len(names)} model(s) that fit the data"
           + (f", of {kinds} families" if kinds > 1 else ""))
    blend = len(names) > 1 and not find_constraint(intent.constraints, ConstraintKind.MODEL)
    table = table_of(profile, intent)
    warm, why_warm = warm_starts(names, table, winners)
    return ModelSearch(candidates=names, params={name: params_of(name) for name in names}, budget_seconds=each,
                       metric=measure, blend=blend, table=table.stored(), warm_start=warm,
                       reason=f"{who}; {each:g} s each ({why_budget}); the best {measure} on the training rows' "
                              f"validation wins ({why_metric})"
                              + ("; their weighted average instead when it validates better" if blend else "")
                              + why_warm)
