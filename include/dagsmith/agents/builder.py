"""Agent A4, the pipeline builder: picks a service per stage, infers its parameters, validates, stores.

Autonomous mode takes each stage's top candidate; a person's choices (interactive mode) override it.
The pipeline is a DAG whose edges are data flow: the main chain transforms the data, and evaluation,
visualisation and reporting branch off its end. Four checks run before anything can execute.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection
from dataclasses import replace

from dagsmith.agents.compatibility import Gap, data_state, prepares_itself, shortfalls
from dagsmith.agents.intent.model_mentions import covers
from dagsmith.agents.model_search import class_weighting, plan_search
from dagsmith.agents.parameters_llm import read_params
from dagsmith.agents.repeats import repeated_ids
from dagsmith.agents.stages import BRANCH_STAGES, STAGE_ORDER, ordered
from dagsmith.catalog.repository import CatalogEntry
from dagsmith.errors import InputError
from dagsmith.models.catalog import Stage
from dagsmith.models.intent import ConstraintKind, Intent
from dagsmith.models.plan import PipelineSpec, PipelineStatus, PlannedStep, Recommendation, ValidationCheck
from dagsmith.models.plan import TOP_CANDIDATES
from dagsmith.models.profile import DatasetProfile, SemanticType
from dagsmith.models.reasoning import Provenance
from dagsmith.reasoning.llm import ModelReasoner, ReasonerFailed, decide

MIN_ROWS = {True: 20, False: 10}  # supervised or not
MIN_TEST_ROWS = 5


class ChoiceError(InputError, ValueError):
    """A person's choice names a service that is not a candidate for that stage."""


#: A choice, aimed at one target's pipeline when several are built ("rooms: modelling=random_forest_regressor").
_CHOICE = re.compile(r"(?:(?P<target>.*):)?\s*(?P<stage>[^:=]*)=(?P<service>.*)")


def _choice(line: str) -> tuple[str | None, Stage, str]:
    """One choice line as (the target it aims at or None, stage, microservice); not a choice is a ``ChoiceError``."""
    found = _CHOICE.fullmatch(line)
    try:
        stage = Stage(found["stage"].strip()) if found else None
    except ValueError:
        stage = None
    if stage is None:
        raise ChoiceError(f"a choice is [TARGET:] STAGE=MICROSERVICE with a stage among "
                          f"{', '.join(s.value for s in Stage)}; got '{line}'")
    return (found["target"].strip() if found["target"] is not None else None), stage, found["service"].strip()


def check_choices(lines: list[str]) -> None:
    """Raise ``ChoiceError`` for the first line that is not a choice: what can be checked before the goal's targets
    are known."""
    for line in (line.strip() for line in lines):
        if line:
            _choice(line)


def parse_choices(lines: list[str], target: str | None = None, targets: Collection[str] = ()) -> dict[Stage, str]:
    """``STAGE=MICROSERVICE`` lines (blank ones ignored), as people write them in the CLI or the Airflow form.
    ``TARGET: STAGE=MICROSERVICE`` chooses for that target's pipeline only: the choices for ``target``'s are the plain
    lines and those aimed at it. A line may aim at one of the goal's ``targets`` built one pipeline each, or at the
    one ``target`` there is; aiming at any other column is an error naming the planned ones."""
    targets = list(targets) or ([target] if target else [])
    choices = {}
    for line in (line.strip() for line in lines):
        if not line:
            continue
        aimed, stage, service = _choice(line)
        if aimed is not None and aimed not in targets:
            planned = (f"the pipelines built predict {', '.join(targets)}" if len(targets) > 1 else
                       f"the pipeline built predicts {targets[0]}" if targets else
                       "the pipeline built predicts no column")
            raise ChoiceError(f"'{line}' chooses for the pipeline predicting '{aimed}', but {planned}")
        if aimed in (None, target):
            choices[stage] = service
    return choices


def top_choices_markdown(recommendation: Recommendation, target: str | None = None) -> str:
    """The top 3 per stage as a person chooses among them: name, score and the reason to audit; under a heading
    naming the ``target`` when the goal's targets are built one pipeline each."""
    lines = [f"### Pipeline predicting {target} (choose as `{target}: STAGE=MICROSERVICE`)", ""] if target else []
    for stage in recommendation.stages:
        lines.append(f"**{stage.stage.value}**")
        lines += stage.top_lines()
        lines.append("")
    return "\n".join(lines)


def _choose(recommendation: Recommendation, choices: dict[Stage, str]) -> list[tuple[Stage, str, list[str], str]]:
    planned = [stage.stage for stage in recommendation.stages]
    unknown = [stage.value for stage in choices if stage not in planned]
    if unknown:
        raise ChoiceError(f"this plan has no {' or '.join(unknown)} stage to choose for; its stages are "
                          f"{', '.join(stage.value for stage in planned)}")
    chosen = []
    for stage_rec in recommendation.stages:
        names = [c.microservice for c in stage_rec.candidates]
        if not names:
            continue
        pick, by = names[0], "recommender"
        if stage_rec.stage in choices:
            pick, by = choices[stage_rec.stage], "user"
            if pick not in names:
                raise ChoiceError(f"'{pick}' is not a candidate for {stage_rec.stage.value}; "
                                  f"choose one of {', '.join(names[:TOP_CANDIDATES])}")
        chosen.append((stage_rec.stage, pick, [n for n in names if n != pick], by))
    return chosen


def _honour_model_request(recommendation: Recommendation, intent: Intent,
                          catalog: dict[str, CatalogEntry]) -> Recommendation:
    """The ranking with only the models the goal asks for at the modelling stage, in their order; a request no
    catalog model meets is refused, naming the closest ones."""
    labels = intent.asks(ConstraintKind.MODEL)
    if not labels:
        return recommendation
    asked = " or ".join(labels)
    ranking = recommendation.for_stage(Stage.MODELLING)
    if ranking is None:
        raise ChoiceError(f"the goal asks for {asked}, a model that predicts a column, but it reads as "
                          f"{intent.task_type.value.replace('_', ' ')}, which fits no such model; name the column to "
                          f"predict, or leave the model out")
    kept = [c for c in ranking.candidates
            if any(covers(label, catalog[c.microservice].analysis.algorithms) for label in labels)]
    if not kept:
        closest = ", ".join(c.microservice for c in ranking.top) or "none"
        raise ChoiceError(f"the goal asks for {asked}, but no model of that kind in the catalog fits "
                          f"{intent.task_type.value.replace('_', ' ')}; the closest are {closest}. Upload one "
                          f"(dagsmith catalog add) or leave the model out of the goal")
    stages = [s.model_copy(update={"candidates": kept}) if s.stage is Stage.MODELLING else s
              for s in recommendation.stages]
    return recommendation.model_copy(update={"stages": stages})


# ---------------------------------------------------------------- parameter inference
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
    if stage is Stage.SPLITTING:
        size = 0.25 if n < 1_000 else 0.1 if n > 100_000 else 0.2
        put("test_size", size, f"{n:,} rows: {size:.0%} held out keeps enough rows on both sides")
        put("stratify", intent.task_type.classification, "stratified so the test set keeps the class balance"
            if intent.task_type.classification else "not a classification task")
        put("random_state", 42, "fixed seed for a reproducible split")
        if profile.time_column:
            put("time_column", profile.time_column, f"'{profile.time_column}' is the table's time column")
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
    elif stage is Stage.FEATURE_SELECTION:
        limit = intent.asks(ConstraintKind.MAX_FEATURES)
        if limit:
            put("k", int(limit), "the goal limits the number of features")
    elif stage is Stage.MODELLING:
        weighting = class_weighting(intent)
        if weighting:
            put("class_weight", "balanced", weighting)
        budget = intent.asks(ConstraintKind.TIME_BUDGET)
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


def _left_to_model(chosen: list[tuple[Stage, str, list[str], str]], catalog: dict[str, CatalogEntry]) -> set[Stage]:
    """The preparation stages the modelling pick does itself, so the chain leaves the columns raw for it."""
    pick = next((name for stage, name, *_ in chosen if stage is Stage.MODELLING), None)
    planned = {stage for stage, *_ in chosen}
    return prepares_itself(catalog[pick].analysis.tags) & planned if pick else set()


def done_by_model(spec: PipelineSpec, catalog: dict[str, CatalogEntry]) -> set[Stage]:
    """Stages no step runs because every model the modelling step may fit does them itself."""
    step = next((s for s in spec.steps if s.stage is Stage.MODELLING), None)
    if step is None:
        return set()
    models = step.search.candidates if step.search else [step.microservice]
    present = {s.stage for s in spec.steps}
    return set.intersection(*(prepares_itself(catalog[m].analysis.tags) for m in models)) - present


# ---------------------------------------------------------------- the graph
def _wire(stages: list[Stage]) -> dict[int, list[int]]:
    """Edges as data flow: a chain through the transforming stages, branches off its end."""
    depends: dict[int, list[int]] = {}
    last_main: int | None = None
    position = {stage: i for i, stage in enumerate(stages)}
    for i, stage in enumerate(stages):
        if stage in BRANCH_STAGES and last_main is not None:
            parent = position.get(Stage.EVALUATION) if stage is Stage.REPORTING else None
            depends[i] = [parent if parent is not None else last_main]
        else:
            depends[i] = [last_main] if last_main is not None else []
            last_main = i
    return depends


def _ancestors(position: int, depends: dict[int, list[int]]) -> set[int]:
    seen, todo = set(), list(depends.get(position, []))
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(depends.get(node, []))
    return seen


# ---------------------------------------------------------------- validation
def validate(spec: PipelineSpec, profile: DatasetProfile, intent: Intent, catalog: dict[str, CatalogEntry]) -> list[ValidationCheck]:
    depends = {s.position: s.depends_on for s in spec.steps}
    stage_of = {s.position: s.stage for s in spec.steps}
    present = {s.stage for s in spec.steps} | done_by_model(spec, catalog)
    missing = [s.value for s in intent.required_stages if s not in present]
    checks = [ValidationCheck(
        name="required stages", passed=not missing,
        detail="every required stage has a microservice" if not missing
        else f"no compatible microservice for: {', '.join(missing)}")]

    problems, size_problems = [], []
    data = data_state(profile, intent)
    for step in spec.steps:
        upstream = {stage_of[p] for p in _ancestors(step.position, depends)}
        for shortfall in shortfalls(catalog[step.microservice].analysis.tags, replace(data, before=upstream)):
            if shortfall.blocking:
                (size_problems if shortfall.gap is Gap.ROWS else problems).append(
                    f"{step.microservice} {shortfall.reason}")
        if step.stage is Stage.LOADING and step.depends_on:
            problems.append(f"{step.microservice} reads the raw file and must come first")
    checks.append(ValidationCheck(name="formats along edges", passed=not problems,
                                  detail="; ".join(problems) or "each step's input is produced upstream"))

    columns = set(profile.column_names)
    bad = [f"{s.microservice}.{k}='{v}'" for s in spec.steps for k, v in s.params.items()
           if k in {"time_column", "target"} and v not in columns]
    if intent.target and intent.target not in columns:
        bad.append(f"target '{intent.target}'")
    dropped = [s.microservice for s in spec.steps if intent.target and intent.target in (s.params.get("columns") or [])]
    checks.append(ValidationCheck(
        name="columns and target", passed=not bad and not dropped,
        detail="referenced columns exist and no step removes the target" if not bad and not dropped
        else "; ".join([f"unknown column {b}" for b in bad] + [f"{d} would drop the target" for d in dropped])))

    supervised = intent.task_type.supervised
    if profile.n_rows < MIN_ROWS[supervised]:
        size_problems.insert(0, f"{profile.n_rows} rows, at least {MIN_ROWS[supervised]} needed")
    for step in spec.steps:
        test_size = step.params.get("test_size")
        if test_size and profile.n_rows * test_size < MIN_TEST_ROWS:
            size_problems.append(f"a {test_size:.0%} test set would hold under {MIN_TEST_ROWS} rows")
    checks.append(ValidationCheck(name="dataset size", passed=not size_problems,
                                  detail="; ".join(size_problems) or f"{profile.n_rows:,} rows are enough"))
    return checks


# ---------------------------------------------------------------- building and storing
def pipeline_name(goal: str) -> str:
    words = re.findall(r"[a-z0-9]+", goal.lower())[:8]
    return "-".join(words)[:80] or "pipeline"


def build(
    profile: DatasetProfile,
    intent: Intent,
    recommendation: Recommendation,
    catalog: dict[str, CatalogEntry],
    *,
    owner: str,
    dataset: str,
    choices: dict[Stage, str] | None = None,
    reasoner: ModelReasoner | None = None,
    search_seconds: float | None = None,
) -> PipelineSpec:
    """The pipeline for this intent: chosen services, inferred parameters (reviewed by the configured model when
    there is one and its values hold up), the modelling step's search (``search_seconds`` overrides the budget
    sized to the data, a goal's own budget overrides both), edges, and its four checks."""
    if Stage.MODELLING not in (choices or {}):
        recommendation = _honour_model_request(recommendation, intent, catalog)
    chosen = _choose(recommendation, choices or {})
    native = _left_to_model(chosen, catalog) - set(choices or {})
    chosen = [item for item in chosen if item[0] not in native]
    order = {stage: i for i, stage in enumerate(STAGE_ORDER)}
    chosen.sort(key=lambda item: order[item[0]])
    depends = _wire([stage for stage, *_ in chosen])
    steps = []
    for position, (stage, name, alternatives, by) in enumerate(chosen):
        entry = catalog[name]
        if stage is Stage.MODELLING and native:  # self-healing may only swap in models that read the raw columns
            alternatives = [a for a in alternatives if native <= prepares_itself(catalog[a].analysis.tags)]
        params, reasons = infer_params(stage, entry, profile, intent)
        search = plan_search(stage, recommendation.for_stage(stage), name, by, profile, intent, search_seconds,
                             lambda candidate, stage=stage: infer_params(stage, catalog[candidate], profile, intent)[0],
                             lambda candidate: native <= prepares_itself(catalog[candidate].analysis.tags))
        if search and intent.asks(ConstraintKind.MODEL):
            search.reason = f"the goal asks for {' or '.join(intent.asks(ConstraintKind.MODEL))}: {search.reason}"
        if search and native:
            search.reason += (f"; {' and '.join(s.value for s in ordered(native))} left to the models, which do it "
                              f"natively, so no step before them does it")
        steps.append(PlannedStep(
            position=position, stage=stage, microservice=name, params=params, param_reasons=reasons,
            depends_on=depends[position], expected_inputs=entry.analysis.inputs,
            expected_outputs=entry.analysis.outputs, alternatives=alternatives, chosen_by=by, search=search,
        ))
    spec = PipelineSpec(name=pipeline_name(intent.goal), goal=intent.goal, owner=owner, task_type=intent.task_type.value,
                        target=intent.target, dataset=dataset, steps=steps)
    spec.checks = validate(spec, profile, intent, catalog)

    def by_model(model: ModelReasoner) -> tuple[PipelineSpec, Provenance]:
        revised, provenance = read_params(model, spec, catalog, profile, intent)
        revised.checks = validate(revised, profile, intent, catalog)
        if spec.valid and not revised.valid:
            failed = "; ".join(c.detail for c in revised.checks if not c.passed)
            raise ReasonerFailed(f"{model.name}'s parameters fail the pipeline's checks: {failed}", provenance)
        return revised, provenance

    spec, provenance = decide(reasoner, by_model, lambda: spec)
    spec.param_provenance = provenance
    spec.status = PipelineStatus.READY if spec.valid else PipelineStatus.DRAFT
    return spec
