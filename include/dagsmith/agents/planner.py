"""Planning: agents A1-A4 in sequence, from a dataset and a goal to a stored, validated pipeline."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from sqlalchemy.orm import Session

from dagsmith.agents import builder
from dagsmith.agents.choices import parse_choices
from dagsmith.agents.intent.column_requests import excluded_columns
from dagsmith.agents.profiler import profile_dataset
from dagsmith.agents.recommender import analysis_mode, recommend
from dagsmith.agents.intent.understanding import understand, understand_targets
from dagsmith.catalog import repository
from dagsmith.catalog.repository import CatalogEntry
from dagsmith.config import Settings
from dagsmith.embeddings import Embedder, default_embedder
from dagsmith.errors import InputError
from dagsmith.learning import answers
from dagsmith.learning.configurations import search_winners
from dagsmith.models.catalog import Stage, TaskType
from dagsmith.models.intent import GivenFields, Intent
from dagsmith.models.plan import (
    PipelineSpec,
    Plan,
    RankingMode,
    Recommendation,
    Weights,
)
from dagsmith.models.profile import DatasetProfile, SemanticType
from dagsmith.reasoning.llm import model_reasoner
from dagsmith.store.db import session_scope
from dagsmith.store.pipelines import insert_pipeline
from dagsmith_kit import portfolio

#: Optional stages a pipeline gets unless the person says otherwise: plots, and removing duplicates when the
#: profiler found some (the intent only lists it then). Not a reporting step: the run's answer (``answer.md``)
#: already composes every step's report, plots and metrics, and a report step beside the plotting one would
#: repeat it without the plots.
DEFAULT_OPTIONAL = {Stage.VISUALISATION, Stage.DEDUPLICATION}


class EmptyCatalog(InputError, RuntimeError):
    """There is nothing to plan with yet."""


def _entries(session: Session, mode: RankingMode) -> list[CatalogEntry]:
    entries = repository.entries(session, analysis_mode(mode))
    if not entries:
        raise EmptyCatalog(repository.EMPTY_CATALOG)
    return entries


def recommend_stages(
    profile: DatasetProfile, intent: Intent, *, user: str = "anonymous", mode: RankingMode = RankingMode.FULL,
    weights: Weights | None = None, settings: Settings | None = None, embedder: Embedder | None = None,
) -> Recommendation:
    """Agent A3 on the intent's required stages plus the default optional ones."""
    stages = intent.required_stages + [s for s in intent.optional_stages if s in DEFAULT_OPTIONAL]
    with session_scope(settings) as session:
        return recommend(intent, profile, stages, _entries(session, mode), session=session,
                         embedder=embedder or default_embedder(), user=None if user == "anonymous" else user,
                         mode=mode, weights=weights)


def build_pipelines(
    profile: DatasetProfile, planned: Sequence[tuple[Intent, Recommendation, dict[Stage, str]]], *, data: str | Path,
    user: str = "anonymous", settings: Settings | None = None, schedule: str | None = None, shared: bool = False,
    accept: Callable[[PipelineSpec], None] = lambda spec: None,
) -> list[PipelineSpec]:
    """Agent A4 for each target (its intent, ranking and chosen services): build and validate every pipeline, let
    ``accept`` refuse one by raising, then store them all together, so a target whose pipeline cannot be built
    leaves no pipeline of the others behind."""
    built = [_build(profile, intent, recommendation, data=data, user=user, choices=choices, settings=settings)
             for intent, recommendation, choices in planned]
    for spec, _ in built:
        spec.schedule, spec.shared = schedule, shared
        accept(spec)
    with session_scope(settings) as session:
        return [_store(session, spec, ids, profile, intent, recommendation)
                for (spec, ids), (intent, recommendation, _) in zip(built, planned, strict=True)]


def _build(profile: DatasetProfile, intent: Intent, recommendation: Recommendation, *, data: str | Path, user: str,
           choices: dict[Stage, str] | None, settings: Settings | None) -> tuple[PipelineSpec, dict[str, int]]:
    """The built pipeline, and the catalog's ids by service name that storing it needs."""
    with session_scope(settings) as session:
        catalog = {entry.name: entry for entry in _entries(session, recommendation.mode)}
        learned = search_winners(session) if recommendation.mode is RankingMode.FULL else []
    spec = builder.build(profile, intent, recommendation, catalog, owner=user, dataset=str(Path(data).resolve()),
                         choices=choices, reasoner=model_reasoner(settings),
                         search_seconds=(settings or Settings.from_env()).search_seconds,
                         winners=[*learned, *portfolio.shipped()])
    return spec, {name: entry.id for name, entry in catalog.items()}


def _store(session: Session, spec: PipelineSpec, ids: dict[str, int], profile: DatasetProfile, intent: Intent,
           recommendation: Recommendation) -> PipelineSpec:
    # a year per row numbers the rows, and names them in an answer, but a forecast learns its trend from it
    trend = profile.time_column if intent.task_type is TaskType.TIME_SERIES_FORECASTING else None
    labels = [c.name for c in profile.columns if c.semantic_type is SemanticType.ID and c.name != trend]
    record = {"intent": intent.model_dump(mode="json"), "recommendation": recommendation.model_dump(mode="json"),
              "parameters_by": spec.param_provenance.model_dump(mode="json"),
              "profile_summary": {"n_rows": profile.n_rows, "n_columns": profile.n_columns,
                                  "quality": profile.quality.model_dump(mode="json")},
              "roles": {"id_columns": labels,
                        "time_column": profile.time_column,
                        "excluded_columns": excluded_columns(intent.constraints, profile.column_names,
                                                             {intent.target})}}
    return spec.model_copy(update={"id": insert_pipeline(session, spec, ids, record)})


def plan(data: str | Path, goal: str, **options) -> Plan:
    """The one pipeline of a goal with one target, for callers that take one (``plan_each``'s options): a goal naming
    several targets is a question here, even one asking for a model of each."""
    [one] = plan_each(data, goal, single=True, **options)
    return one


def plan_each(
    data: str | Path,
    goal: str,
    *,
    user: str = "anonymous",
    mode: RankingMode = RankingMode.FULL,
    weights: Weights | None = None,
    choices: dict[Stage, str] | None = None,
    choose: Sequence[str] = (),
    settings: Settings | None = None,
    embedder: Embedder | None = None,
    save: bool = True,
    ask: Callable[[Intent, Recommendation, dict[Stage, str]], dict[Stage, str]] | None = None,
    each_target: bool = False,
    single: bool = False,
    given: GivenFields | None = None,
    answered: bool = False,
    descriptions: Mapping[str, str] | None = None,
) -> list[Plan]:
    """Profile, understand, recommend and build; with ``save`` each pipeline is stored (status ready or draft).
    One pipeline, or one per target when the goal names several columns to predict and asks for a model of each
    (or ``each_target`` asks for it), unless ``single``; several targets without that request are a question
    (``SeveralTargets``). ``choose`` are a person's choice lines over ``choices``, read once the targets are known
    (``choices.parse_choices``: ``TARGET: STAGE=MICROSERVICE`` chooses for that target's pipeline only). ``ask`` lets a
    person choose among the ranked candidates before each build (interactive): it is given the intent, its ranking
    and what was chosen for it already, and answers for the stages left open. ``given`` are fields stated outright
    (target, task, metric, columns to leave out, time budget): each wins over the goal's words; ``answered`` says they
    answer a question about the goal. ``descriptions`` say what columns hold, over the data's own dictionary.

    What a person chose for these words on a table of these columns before (``learning.answers``) is read without
    asking; a target or task given now (with ``save``) is remembered for the next time.

    Raises ``DatasetError`` (unreadable data), ``AmbiguousGoal``, ``InvalidIntent`` (e.g. unknown target),
    ``FieldError`` (a given field that cannot be used), ``EmptyCatalog`` and ``choices.ChoiceError``, each with a
    message meant for the user.
    """
    timings: dict[str, float] = {}

    def timed(spent: dict[str, float], name: str, step):
        started = time.perf_counter()
        result = step()
        spent[name] = round(time.perf_counter() - started, 4)
        return result

    def plan_for(intent: Intent, chosen: dict[Stage, str]) -> tuple[Plan, dict[str, int]]:
        spent = dict(timings)  # profiling and reading the goal are shared; each target is recommended and built
        recommendation = timed(spent, "recommend", lambda: recommend_stages(
            profile, intent, user=user, mode=mode, weights=weights, settings=settings, embedder=embedder))
        picked = {**chosen, **ask(intent, recommendation, chosen)} if ask else chosen
        spec, ids = timed(spent, "build", lambda: _build(profile, intent, recommendation, data=data, user=user,
                                                         choices=picked, settings=settings))
        return Plan(profile=profile, intent=intent, recommendation=recommendation, pipeline=spec, timings=spent), ids

    def stored(session: Session, built: Plan, ids: dict[str, int]) -> Plan:
        spent = dict(built.timings)
        spec = timed(spent, "store", lambda: _store(session, built.pipeline, ids, profile, built.intent,
                                                     built.recommendation))
        return built.model_copy(update={"pipeline": spec, "timings": spent})

    with session_scope(settings) as session:  # said before the data is read, not after profiling it
        if not repository.names(session):
            raise EmptyCatalog(repository.EMPTY_CATALOG)
    profile = timed(timings, "profile", lambda: profile_dataset(data, descriptions=descriptions))
    given = given or GivenFields()
    intents = timed(timings, "intent", lambda: read_intents(goal, profile, user=user, given=given, single=single,
                                                            each_target=each_target, settings=settings,
                                                            embedder=embedder))
    targets = [intent.target for intent in intents if intent.target]
    # every line is checked against the targets before anything is built: a wrong one stores no pipeline
    chosen = [{**(choices or {}), **parse_choices(list(choose), intent.target, targets)} for intent in intents]
    built = [plan_for(intent, picked) for intent, picked in zip(intents, chosen, strict=True)]
    if not save:
        return [one for one, _ in built]
    # stored together once every pipeline is built: a choice one target's pipeline cannot take stores none of them
    with session_scope(settings) as session:
        if given.settles:
            remember_reading(session, goal, profile, intents, user=user, how="answered" if answered else "given")
        return [stored(session, one, ids) for one, ids in built]


def read_intents(goal: str | None, profile: DatasetProfile, *, user: str, given: GivenFields, single: bool = False,
                 each_target: bool = False, settings: Settings | None = None,
                 embedder: Embedder | None = None) -> list[Intent]:
    """Agent A2 for ``user``: the goal read as they (or, failing that, anyone) chose before for these words on a table
    of these columns, unless fields given now say otherwise; else as the fields and the words say (``understand``, or
    ``understand_targets`` unless ``single``)."""
    remembered = None
    if (goal or "").strip() and not given.settles:
        with session_scope(settings) as session:
            remembered = answers.recall(session, profile, goal, user=user)
    fields = remembered.fields(given) if remembered else given
    reasoner = model_reasoner(settings)
    intents = ([understand(goal, profile, reasoner, embedder, given=fields)] if single
               else understand_targets(goal, profile, reasoner, embedder, each_target=each_target, given=fields))
    return [remembered.explain(intent) for intent in intents] if remembered else intents


def remember_reading(session: Session, goal: str | None, profile: DatasetProfile, intents: list[Intent], *, user: str,
                     how: str) -> None:
    """Remember the reading a person chose for a goal in words (a question answered, fields given): one intent's."""
    if (goal or "").strip() and len(intents) == 1:
        answers.remember(session, profile, goal, intents[0].task_type, intents[0].target, user=user, how=how)
