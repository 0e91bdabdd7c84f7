"""The recommender and the builder read the same typed tags: changing one moves both."""

from __future__ import annotations

from dataclasses import replace

from dagsmith import datasets
from dagsmith.agents import builder, checks
from dagsmith.agents.compatibility import DataState, Gap, prepares_itself, shortfalls, strengths
from dagsmith.agents.profiler import profile_dataset
from dagsmith.agents.recommender import recommend
from dagsmith.agents.intent.understanding import understand
from dagsmith.catalog import repository
from dagsmith.models.catalog import AnalysisMode, Stage, Tags
from dagsmith.store.db import session_scope


def _with_tags(entry: repository.CatalogEntry, **changes) -> repository.CatalogEntry:
    tags = entry.analysis.tags.model_copy(update=changes)
    return replace(entry, analysis=entry.analysis.model_copy(update={"tags": tags}))


def test_a_tag_change_moves_the_recommender_and_the_builder_alike(catalog_settings, embedder, tmp_path):
    path = tmp_path / "churn.csv"
    datasets.load("wa_churn").to_csv(path, index=False)
    profile = profile_dataset(path)
    intent = understand("predict customer churn", profile)
    with session_scope(catalog_settings) as session:
        entries = repository.entries(session, AnalysisMode.CODE)

        def ranked(catalog_entries):
            return recommend(intent, profile, intent.required_stages, catalog_entries, session=session,
                             embedder=embedder)

        before = ranked(entries)
        top = before.for_stage(Stage.MODELLING).top[0]
        catalog = {e.name: e for e in entries}
        spec = builder.build(profile, intent, before, catalog, owner="ana", dataset=str(path),
                             choices={Stage.MODELLING: top.microservice})
        assert spec.valid, [c.detail for c in spec.checks if not c.passed]

        limited = {**catalog, top.microservice: _with_tags(catalog[top.microservice], limits={"max_rows": 100})}
        after = ranked(list(limited.values()))
    moved = next(c for c in after.for_stage(Stage.MODELLING).candidates if c.microservice == top.microservice)
    assert moved.signals.compatibility < top.signals.compatibility
    assert "limited to 100 rows" in moved.reason
    size = next(c for c in checks.validate(spec, profile, intent, limited) if c.name == "dataset size")
    assert not size.passed and f"{top.microservice} limited to 100 rows" in size.detail


def test_shortfalls_say_what_blocks_and_what_only_costs_rank():
    data = {"missing_features": ["age"], "categorical_features": ["city"], "n_rows": 500, "format": "csv",
            "quality": 0.9, "has_target": True}
    raw = DataState(**data)
    prepared = DataState(**data, before={Stage.IMPUTATION, Stage.ENCODING, Stage.SPLITTING, Stage.MODELLING})
    strict = Tags(numeric_only=True, rejects_missing=True, needs_split=True, needs_model=True)
    gaps = {s.gap: s for s in shortfalls(strict, raw)}
    assert set(gaps) == {Gap.CATEGORICAL, Gap.MISSING, Gap.SPLIT, Gap.MODEL}
    assert {g for g, s in gaps.items() if s.blocking} == {Gap.SPLIT, Gap.MODEL}
    assert gaps[Gap.MODEL].factor == 0.0 and "1 categorical columns" in gaps[Gap.CATEGORICAL].reason
    assert shortfalls(strict, prepared) == []
    assert prepares_itself(Tags(native_categorical=True, handles_missing=True)) == {Stage.ENCODING, Stage.IMPUTATION}
    assert [s.gap for s in shortfalls(Tags(needs_target=True), DataState(**{**data, "has_target": False}))] \
        == [Gap.TARGET]


def test_a_random_split_of_an_entitys_rows_misleads_until_the_rows_are_split():
    data = {"missing_features": [], "categorical_features": [], "n_rows": 600, "format": "csv", "quality": 1.0,
            "has_target": True, "entity": ("farm", 6.0)}
    random, grouped = Tags(shuffles_rows=True), Tags(shuffles_rows=True, keeps_groups=True)
    [gap] = shortfalls(random, DataState(**data))
    assert gap.gap is Gap.GROUPS and gap.misleading and not gap.blocking and "one 'farm' (about 6.0 each)" in gap.reason
    assert shortfalls(grouped, DataState(**data)) == [] and strengths(grouped, DataState(**data))
    assert shortfalls(random, DataState(**data, before={Stage.SPLITTING})) == []  # later steps' folds are their own
    assert shortfalls(random, DataState(**data, forecasting=True, time_column="year"))[0].gap is Gap.TIME_ORDER
    assert shortfalls(random, DataState(**{**data, "entity": None})) == []
