"""Planning: agents A1-A4 in sequence, from a dataset and a goal to a stored, validated pipeline."""

from __future__ import annotations

import time
from pathlib import Path

from dagsmith.agents import builder
from dagsmith.agents.intent import understand
from dagsmith.agents.profiler import profile_dataset
from dagsmith.agents.recommender import analysis_mode, recommend
from dagsmith.catalog import repository
from dagsmith.config import Settings
from dagsmith.embeddings import Embedder, default_embedder
from dagsmith.models.catalog import Stage
from dagsmith.models.plan import Plan, RankingMode, Weights
from dagsmith.models.profile import SemanticType
from dagsmith.store.db import session_scope

#: Optional stages a pipeline gets unless the person says otherwise: plots, a report, and removing
#: duplicates when the profiler found some (the intent only lists it then).
DEFAULT_OPTIONAL = {Stage.VISUALISATION, Stage.REPORTING, Stage.DEDUPLICATION}


class EmptyCatalog(RuntimeError):
    """There is nothing to plan with yet."""


def plan(
    data: str | Path,
    goal: str,
    *,
    user: str = "anonymous",
    mode: RankingMode = RankingMode.FULL,
    weights: Weights | None = None,
    choices: dict[Stage, str] | None = None,
    settings: Settings | None = None,
    embedder: Embedder | None = None,
    save: bool = True,
) -> Plan:
    """Profile, understand, recommend and build; with ``save`` the pipeline is stored (status ready or draft).

    Raises ``DatasetError`` (unreadable data), ``AmbiguousGoal``, ``InvalidIntent`` (e.g. unknown target),
    ``EmptyCatalog`` and ``builder.ChoiceError``, each with a message meant for the user.
    """
    embedder = embedder or default_embedder()
    timings: dict[str, float] = {}
    started = time.perf_counter()
    profile = profile_dataset(data)
    timings["profile"] = time.perf_counter() - started

    started = time.perf_counter()
    intent = understand(goal, profile)
    timings["intent"] = time.perf_counter() - started

    stages = intent.required_stages + [s for s in intent.optional_stages if s in DEFAULT_OPTIONAL]
    with session_scope(settings) as session:
        started = time.perf_counter()
        entries = repository.entries(session, analysis_mode(mode))
        if not entries:
            raise EmptyCatalog("the microservice catalog is empty: run `dagsmith catalog sync` first")
        recommendation = recommend(intent, profile, stages, entries, session=session, embedder=embedder,
                                   user=None if user == "anonymous" else user, mode=mode, weights=weights)
        timings["recommend"] = time.perf_counter() - started

        started = time.perf_counter()
        catalog = {entry.name: entry for entry in entries}
        spec = builder.build(profile, intent, recommendation, catalog, owner=user,
                             dataset=str(Path(data).resolve()), choices=choices)
        if save:
            record = {"intent": intent.model_dump(mode="json"), "recommendation": recommendation.model_dump(mode="json"),
                      "profile_summary": {"n_rows": profile.n_rows, "n_columns": profile.n_columns,
                                          "quality": profile.quality.model_dump(mode="json")},
                      "roles": {"id_columns": [c.name for c in profile.columns if c.semantic_type is SemanticType.ID],
                                "time_column": profile.time_column}}
            spec = builder.store(session, spec, catalog, record)
        timings["build"] = time.perf_counter() - started
    return Plan(profile=profile, intent=intent, recommendation=recommendation, pipeline=spec,
                timings={k: round(v, 4) for k, v in timings.items()})
