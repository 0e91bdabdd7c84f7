"""Agent A3, the recommender: ranks every catalog microservice for each stage the intent needs.

score = w1 keyword + w2 semantic + w3 compatibility + w4 pattern, each signal in [0, 1]:
- keyword: stage and task terms found in the service's name (full credit) or description (half credit);
- semantic: cosine between a stage query and the service's embedding, computed by pgvector;
- compatibility: whether the code serves this stage and task, and whether the data, as it will be when the
  stage runs, meets what the code demands (numeric input, no missing values, row limits, file format);
- pattern: net successes from execution history (100 = 1.0), the user's own history weighing in; none for a
  service whose results on this data would mislead (a random split of a forecast, or of an entity's rows).
Services whose code cannot serve the stage or the task are not candidates at all (except in the
semantic-only ablation, which ranks by cosine alone).
"""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy.orm import Session

from dagsmith.agents.compatibility import DataState, data_state, shortfalls, strengths
from dagsmith.agents.model_search import DEFAULT_METRIC
from dagsmith.agents.model_search import metric as search_metric
from dagsmith.agents.stages import STAGE_ORDER
from dagsmith.catalog import repository
from dagsmith.catalog.knowledge import ANALYSIS_TERMS, MODEL_FAMILY_ALGORITHMS
from dagsmith.catalog.repository import CatalogEntry
from dagsmith.embeddings import Embedder
from dagsmith.learning.patterns import History, load_history
from dagsmith.models.catalog import AnalysisMode, Stage, TaskType
from dagsmith.models.intent import ConstraintKind, Intent
from dagsmith.models.plan import Candidate, RankingMode, Recommendation, Signals, StageRecommendation, Weights
from dagsmith.models.profile import DatasetProfile
from dagsmith_kit.metrics import label as metric_label

#: Candidates kept per stage: the top 3 are shown, the rest are offered to people and to self-healing.
KEPT_CANDIDATES = 20
#: Below this overall quality, repair stages are favoured (ARCHITECTURE.md).
REPAIR_QUALITY = 0.7
REPAIR_STAGES = {Stage.IMPUTATION, Stage.DEDUPLICATION, Stage.OUTLIER_HANDLING, Stage.TYPE_CONVERSION}
INTERPRETABLE = {"LogisticRegression", "DecisionTreeClassifier", "DecisionTreeRegressor", "LinearRegression",
                 "Ridge", "Lasso", "ElasticNet", "GaussianNB"}
OPAQUE = {"SVC", "SVR", "MLPClassifier", "MLPRegressor", "KNeighborsClassifier", "KNeighborsRegressor"}
#: From this many rows on, a model's usual strength on tabular data weighs in its compatibility (boosted trees and
#: forests ahead of single trees, naive Bayes and nearest neighbours); on fewer rows simple models do as well.
STRENGTH_MIN_ROWS = 300

#: Word stems that say what a stage is about, matched in names and descriptions.
STAGE_TERMS: dict[Stage, tuple[str, ...]] = {
    Stage.LOADING: ("load", "read", "file", "csv", "excel"),
    Stage.VALIDATION: ("validat", "check", "schema"),
    Stage.TYPE_CONVERSION: ("type", "convert", "pars"),
    Stage.DEDUPLICATION: ("duplicat", "dedup"),
    Stage.COLUMN_FILTERING: ("constant", "identifier", "drop"),
    Stage.SPLITTING: ("split", "train", "test"),
    Stage.IMPUTATION: ("imput", "missing", "fill"),
    Stage.OUTLIER_HANDLING: ("outlier", "clip", "extreme"),
    Stage.FEATURE_ENGINEERING: ("feature", "extract", "creat"),
    Stage.ENCODING: ("encod", "categor"),
    Stage.SCALING: ("scal", "standardi", "normali"),
    Stage.FEATURE_SELECTION: ("select", "feature"),
    Stage.DIMENSIONALITY_REDUCTION: ("reduc", "component", "dimension"),
    Stage.MODELLING: ("model", "train", "predict"),
    Stage.CLUSTERING: ("cluster", "group", "segment"),
    Stage.ANOMALY_DETECTION: ("anomal", "outlier", "unusual"),
    Stage.EVALUATION: ("evaluat", "metric", "score"),
    Stage.EXPLANATION: ("explain", "importance", "driver"),
    Stage.EDA: ("statistic", "profil", "correlat", "explor"),
    Stage.VISUALISATION: ("plot", "chart", "visuali"),
    Stage.REPORTING: ("report", "summar", "markdown"),
}
TASK_TERMS: dict[TaskType, tuple[str, ...]] = {
    TaskType.BINARY_CLASSIFICATION: ("classif",),
    TaskType.MULTICLASS_CLASSIFICATION: ("classif",),
    TaskType.REGRESSION: ("regress",),
    TaskType.TIME_SERIES_FORECASTING: ("regress", "time"),
    TaskType.CLUSTERING: ("cluster",),
    TaskType.DIMENSIONALITY_REDUCTION: ("reduc",),
    TaskType.ANOMALY_DETECTION: ("anomal",),
    TaskType.EXPLORATORY_ANALYSIS: ("statistic",),
}
#: How much a forecast's feature step that gives none of the target's past fits, against one that does.
WITHOUT_PAST = 0.6
#: Stages whose services must fit the task type (a regressor is no classifier).
TASK_BOUND = {Stage.MODELLING, Stage.EVALUATION, Stage.EXPLANATION, Stage.VISUALISATION}


def _keyword(entry: CatalogEntry, terms: tuple[str, ...]) -> float:
    name = entry.name.lower()
    text = " ".join([entry.analysis.description, " ".join(entry.manifest.keywords)]).lower()
    credit = sum(1.0 if term in name else 0.5 if term in text else 0.0 for term in terms)
    return min(1.0, credit / min(3, len(terms)))


def _fits_task(entry: CatalogEntry, stage: Stage, task: TaskType) -> bool:
    if stage not in TASK_BOUND or not entry.analysis.task_types:
        return True
    return any(_serves(fits, task) for fits in entry.analysis.task_types)


def _serves(fits: TaskType, task: TaskType) -> bool:
    """Whether a service fit for ``fits`` does ``task``: a multiclass classifier separates two classes as well, and
    a regressor forecasts."""
    return fits is task or (task is TaskType.BINARY_CLASSIFICATION and fits.classification) or (
        task is TaskType.TIME_SERIES_FORECASTING and fits is TaskType.REGRESSION)


def asked_analyses(intent: Intent) -> list[str]:
    """The analyses an exploratory goal names (every one but associations when it names none and no focus), and
    ``associations`` when it names a column to relate the rest to."""
    named = next((list(c.value) for c in intent.constraints if c.kind is ConstraintKind.ANALYSES), None)
    focus = any(c.kind is ConstraintKind.FOCUS for c in intent.constraints)
    if named is None and not focus and intent.task_type is TaskType.EXPLORATORY_ANALYSIS:
        named = [name for name in ANALYSIS_TERMS if name != "associations"]
    return (named or []) + (["associations"] if focus else [])


def _coverage(entry: CatalogEntry, asked: list[str]) -> tuple[float, str]:
    """The share of the asked analyses the code does, as a factor on compatibility, and the reason."""
    missing = [name for name in asked if name not in entry.analysis.tags.analyses]
    if not missing:
        return 1.0, f"does every analysis asked for ({', '.join(asked)})"
    return 0.4 + 0.6 * (1 - len(missing) / len(asked)), f"does not do {', '.join(missing)}, which were asked for"


def _ruled_out(entry: CatalogEntry, intent: Intent) -> bool:
    """Whether the goal excludes the family of the service's estimator ("no neural nets", "avoid SVMs")."""
    excluded = [MODEL_FAMILY_ALGORITHMS.get(c.value, ())
                for c in intent.constraints if c.kind is ConstraintKind.EXCLUDE_FAMILY]
    return any(algorithm.startswith(prefixes) for prefixes in excluded for algorithm in entry.analysis.algorithms)


def _compatibility(entry: CatalogEntry, stage: Stage, intent: Intent,
                   state: DataState) -> tuple[float, list[str], bool]:
    """How well the code fits this stage and the data at this point, with the reasons a person would check, and
    whether its results here would mislead (``Shortfall.misleading``)."""
    analysis = entry.analysis
    if stage not in analysis.stages or not _fits_task(entry, stage, intent.task_type) or _ruled_out(entry, intent):
        return 0.0, [], False
    found = shortfalls(analysis.tags, state)
    if any(shortfall.factor == 0.0 for shortfall in found):
        return 0.0, [], False
    helps = strengths(analysis.tags, state)
    score = min(1.0, (1.0 if analysis.stages[0] == stage else 0.6) + 0.2 * len(helps))
    for shortfall in found:
        score *= shortfall.factor
    reasons = [shortfall.reason for shortfall in found] + helps
    if stage is Stage.EDA and (asked := asked_analyses(intent)):
        factor, why = _coverage(entry, asked)
        score *= factor
        reasons.append(why)
    if stage is Stage.EVALUATION and analysis.tags.metrics and intent.task_type in DEFAULT_METRIC:
        factor, why = _judged_by(analysis.tags.metrics, intent)
        score *= factor
        reasons.append(why)
    if stage is Stage.FEATURE_ENGINEERING and state.forecasting:
        if analysis.tags.lags_target:
            reasons.append("gives the forecast the target's own past, what a series is forecast from first")
        else:
            score *= WITHOUT_PAST
            reasons.append("gives the forecast none of the target's own past, only what else it knows ahead")
    if stage in REPAIR_STAGES and state.quality < REPAIR_QUALITY:
        score = min(1.0, score + 0.1)
        reasons.append(f"data quality {state.quality:.2f} favours repair")
    if stage is Stage.MODELLING and any(c.kind is ConstraintKind.INTERPRETABLE and c.value for c in intent.constraints):
        if set(analysis.algorithms) & INTERPRETABLE:
            reasons.append("interpretable, as the goal asks")
        elif set(analysis.algorithms) & OPAQUE or "boost" in entry.name or "forest" in entry.name:
            score *= 0.4
            reasons.append("hard to interpret, and the goal asks for interpretability")
    elif stage is Stage.MODELLING and state.n_rows >= STRENGTH_MIN_ROWS and analysis.tags.strength is not None:
        score *= analysis.tags.strength
        reasons.append(f"its estimator's usual strength on tabular data: {analysis.tags.strength:.2f}")
    return score, reasons, any(shortfall.misleading for shortfall in found)


def _judged_by(reported: list[str], intent: Intent) -> tuple[float, str]:
    """An evaluator that reports the metric the model is judged by (the goal's, or the task's usual one) serves the
    answer; one that reports others only adds detail beside it."""
    wanted, _ = search_metric(intent)
    if wanted in reported:
        return 1.0, f"reports {metric_label(wanted)}, the measure the model is judged by"
    return 0.5, f"does not report {metric_label(wanted)}, the measure the model is judged by"


def stage_query(stage: Stage, intent: Intent, state: DataState) -> str:
    """The text a stage is matched against: what it must do, for which task, on what data."""
    task = intent.task_type.value.replace("_", " ")
    explored = ", ".join(asked_analyses(intent)) or "describe every column"
    words = {Stage.MODELLING: f"train a {task} model", Stage.EVALUATION: f"evaluate {task} predictions",
             Stage.EXPLANATION: f"explain what drives a {task} model's predictions",
             Stage.VISUALISATION: f"plot the data explored: {explored}"
             if intent.task_type is TaskType.EXPLORATORY_ANALYSIS else f"plot {task} results",
             Stage.EDA: f"explore the data: {explored}"}
    parts = [words.get(stage, f"{stage.value.replace('_', ' ')} for {task}")]
    if state.has_missing:
        parts.append("the data has missing values")
    if state.has_categorical:
        parts.append("categorical columns")
    if state.quality < REPAIR_QUALITY:
        parts.append(f"low data quality {state.quality:.2f}")
    return "; ".join(parts) + "."


def _reason(signals: Signals, notes: list[str], history_successes: int, counted: bool = True) -> str:
    parts = [f"keyword {signals.keyword:.2f}", f"semantic {signals.semantic:.2f}"]
    parts += notes or ([f"compatibility {signals.compatibility:.2f}"] if signals.compatibility else [])
    parts.append((f"{history_successes} successful prior use{'' if history_successes == 1 else 's'}"
                  + ("" if counted else ", not counted for this data"))
                 if history_successes else "no execution history yet")
    return ", ".join(parts)


def _rank_stage(
    stage: Stage, entries: list[CatalogEntry], similarity: dict[int, float], history: History,
    intent: Intent, state: DataState, mode: RankingMode, weights: Weights, query: str,
) -> StageRecommendation:
    terms = STAGE_TERMS.get(stage, ()) + (TASK_TERMS.get(intent.task_type, ()) if stage in TASK_BOUND else ())
    candidates = []
    for entry in entries:
        semantic = max(0.0, min(1.0, similarity.get(entry.id, 0.0)))
        if mode is RankingMode.SEMANTIC_ONLY:
            signals = Signals(keyword=0.0, semantic=semantic, compatibility=0.0, pattern=0.0)
            candidates.append(Candidate(microservice=entry.name, score=round(semantic, 4), signals=signals,
                                        reason=f"semantic {semantic:.2f} (semantic-only ranking)"))
            continue
        compatibility, notes, misleading = _compatibility(entry, stage, intent, state)
        if compatibility == 0.0:
            continue
        counts = history.counts(stage.value, entry.id)
        ignored = mode is RankingMode.NO_HISTORY or misleading  # successes elsewhere say nothing of this data
        pattern = 0.0 if ignored else history.signal(stage.value, entry.id)
        signals = Signals(keyword=round(_keyword(entry, terms), 4), semantic=round(semantic, 4),
                          compatibility=round(compatibility, 4), pattern=round(pattern, 4))
        score = (weights.keyword * signals.keyword + weights.semantic * signals.semantic
                 + weights.compatibility * signals.compatibility + weights.pattern * signals.pattern)
        successes = 0 if mode is RankingMode.NO_HISTORY else counts.successes
        candidates.append(Candidate(
            microservice=entry.name, score=round(score, 4), signals=signals,
            reason=_reason(signals, notes, successes, counted=not misleading),
            prior_successes=counts.successes, prior_failures=counts.failures,
        ))
    candidates.sort(key=lambda c: (-c.score, c.microservice))
    return StageRecommendation(stage=stage, query=query, candidates=candidates[:KEPT_CANDIDATES],
                               considered=len(entries))


def analysis_mode(mode: RankingMode) -> AnalysisMode:
    """Which analysis layer a ranking mode reads: the documentation ablation believes the manifests."""
    return AnalysisMode.DOCUMENTATION if mode is RankingMode.DOCUMENTATION else AnalysisMode.CODE


def recommend(
    intent: Intent,
    profile: DatasetProfile,
    stages: list[Stage],
    entries: list[CatalogEntry],
    *,
    session: Session,
    embedder: Embedder,
    user: str | None = None,
    mode: RankingMode = RankingMode.FULL,
    weights: Weights | None = None,
) -> Recommendation:
    """Rank ``entries`` (the catalog, read in ``analysis_mode(mode)``) for each of ``stages``, in pipeline order."""
    weights = weights or Weights()
    history = load_history(session, user)
    state = data_state(profile, intent)
    ordered_stages = [s for s in STAGE_ORDER if s in set(stages)]
    states = [replace(state, before=set(ordered_stages[:i])) for i in range(len(ordered_stages))]
    queries = [stage_query(stage, intent, at) for stage, at in zip(ordered_stages, states)]
    results = []
    for stage, at, query, vector in zip(ordered_stages, states, queries, embedder.embed(queries)):
        similarity = repository.similarities(session, vector, analysis_mode(mode))
        results.append(_rank_stage(stage, entries, similarity, history, intent, at, mode, weights, query))
    return Recommendation(mode=mode, weights=weights, user=user, stages=results)
