"""Parameters for each step, inferred from the data and the goal, each with its reason; only the ones the service's
code reads (its analysis lists them) are set."""

from __future__ import annotations

import math
import re

from dagsmith.agents.model_search import class_weighting
from dagsmith.agents.repeats import entity_column, repeated_ids
from dagsmith.catalog.repository import CatalogEntry
from dagsmith.models.catalog import Stage, TaskType
from dagsmith.models.intent import ConstraintKind, Horizon, Intent, find_constraint
from dagsmith.models.profile import DatasetProfile, SemanticType


#: The share of a goal's time budget a service that bounds its own work (``budget_seconds``) may take.
SERVICE_SHARE_OF_GOAL = 0.1


def _has(entry: CatalogEntry, name: str) -> bool:
    return any(p.name == name for p in entry.analysis.parameters)


def _default(entry: CatalogEntry, name: str):
    return next((p.default for p in entry.analysis.parameters if p.name == name), None)


def infer_params(stage: Stage, entry: CatalogEntry, profile: DatasetProfile, intent: Intent) -> tuple[dict, dict]:
    """Parameters for one step, from the data and the goal, each with its reason (only those the code reads)."""
    params: dict = {}
    reasons: dict = {}

    def put(name: str, value, why: str) -> None:
        if _has(entry, name):
            params[name], reasons[name] = value, why

    n = profile.n_rows
    budget = intent.asks(ConstraintKind.TIME_BUDGET)
    if budget:
        put("budget_seconds", max(2, round(budget * SERVICE_SHARE_OF_GOAL)),
            f"{SERVICE_SHARE_OF_GOAL:.0%} of the goal's time budget ({budget} s)")
    if stage is Stage.SPLITTING:
        size = 0.25 if n < 1_000 else 0.1 if n > 100_000 else 0.2
        put("test_size", size, f"{n:,} rows: {size:.0%} held out keeps enough rows on both sides")
        put("stratify", intent.task_type.classification, "stratified so the test set keeps the class balance"
            if intent.task_type.classification else "not a classification task")
        put("random_state", 42, "fixed seed for a reproducible split")
        if profile.time_column:
            put("time_column", profile.time_column, f"'{profile.time_column}' is the table's time column")
        if entity := entity_column(profile, intent.target):
            put("group_column", entity[0], f"'{entity[0]}' names an entity with about {entity[1]:.1f} rows each: "
                "its rows stay on one side")
    elif stage is Stage.IMPUTATION:
        numeric_missing = [c for c in profile.columns if c.missing and c.semantic_type is SemanticType.NUMERIC]
        skewed = [c.name for c in numeric_missing if _skewed(c.mean, c.std, c.min, c.max)]
        if skewed:
            put("strategy", "median", f"skewed columns with gaps ({', '.join(skewed[:3])}): the median is robust")
        elif numeric_missing:
            put("strategy", "mean", "numeric gaps in roughly symmetric columns")
        put("n_neighbors", 5 if n >= 50 else 3, f"{n:,} rows")
    elif stage is Stage.ENCODING:
        widest = max((c.unique for c in profile.columns if c.semantic_type is SemanticType.CATEGORICAL), default=0)
        if widest > 20:
            put("max_categories", 20, f"a categorical column has {widest} levels; rare ones are grouped")
    elif stage is Stage.DEDUPLICATION:
        ids = list(repeated_ids(profile))
        if ids:
            put("subset", ids, "rows sharing a record id are one record entered more than once")
    elif stage is Stage.FEATURE_ENGINEERING and intent.task_type is TaskType.TIME_SERIES_FORECASTING:
        horizon = find_constraint(intent.constraints, ConstraintKind.HORIZON)
        if isinstance(horizon, Horizon):
            put("horizon", horizon.value, horizon.reason)
            put("horizon_unit", horizon.unit, horizon.reason)
        else:
            put("horizon", 1, "the goal names no horizon: one step ahead (say 'for the next 12 months' for another)")
            put("horizon_unit", "step", "the goal names no horizon")
    elif stage is Stage.FEATURE_SELECTION:
        limit = intent.asks(ConstraintKind.MAX_FEATURES)
        if limit:
            put("k", int(limit), "the goal limits the number of features")
    elif stage is Stage.MODELLING:
        weighting = class_weighting(intent)
        if weighting:
            put("class_weight", "balanced", weighting)
        trees = 100 if n > 100_000 or (budget and budget < 120) else 200
        put("n_estimators", trees, "fewer trees for a large table or a tight time budget" if trees == 100
            else "enough trees for a stable ensemble")
        put("n_jobs", 1, "one core per step; steps run side by side")
    elif stage is Stage.CLUSTERING:
        wanted = intent.asks(ConstraintKind.N_CLUSTERS)
        k = int(wanted) if wanted else max(2, min(8, round(math.sqrt(n / 50)) or 2))
        if "auto" in {_default(entry, "n_clusters"), _default(entry, "n_components")} and not wanted:
            reasons["n_clusters"] = "chosen by silhouette inside the service"
        else:
            why = "the goal asks for it" if wanted else f"about sqrt(n/50) for {n:,} rows"
            put("n_clusters", k, why)
            put("n_components", k, why)
    elif stage is Stage.ANOMALY_DETECTION:
        share = intent.asks(ConstraintKind.ANOMALY_FRACTION)
        if share:
            put("contamination", share, f"the goal asks for the {share:.1%} most unusual rows")
    elif stage is Stage.EDA:
        focus = intent.asks(ConstraintKind.FOCUS)
        analyses = intent.asks(ConstraintKind.ANALYSES)
        if focus:
            put("focus", focus, f"the goal asks what goes with {focus}")
        if analyses or focus:
            put("analyses", analyses or [], f"the goal asks for {', '.join(analyses)}" if analyses
                else f"the goal asks only what goes with {focus}")
    elif stage is Stage.DIMENSIONALITY_REDUCTION:
        visual = intent.asks(ConstraintKind.VISUALISE) or re.search(r"\b(plot|visuali[sz]e|2d|map|see)\b", intent.goal,
                                                                    re.I)
        numeric = sum(c.semantic_type is SemanticType.NUMERIC for c in profile.columns)
        wanted = intent.asks(ConstraintKind.N_COMPONENTS)
        if wanted:
            put("n_components", int(wanted), "the goal asks for it")
        elif visual:
            put("n_components", 2, "two components to plot")
        elif isinstance(_default(entry, "n_components"), float):
            put("n_components", 0.95, "keep 95% of the variance")
        else:
            put("n_components", max(1, min(10, numeric - 1)), f"{numeric} numeric columns")
    return params, reasons


def _skewed(mean, std, low, high) -> bool:
    if None in (mean, std, low, high) or not std or isinstance(low, str):
        return False
    return abs(mean - (low + high) / 2) > std  # a long tail pulls the mean away from the middle of the range
