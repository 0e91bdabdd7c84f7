"""The recommender and the builder read the same typed tags: changing one moves both."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

from dagsmith import datasets
from dagsmith.agents import builder
from dagsmith.agents.compatibility import DataState, Gap, prepares_itself, shortfalls
from dagsmith.agents.profiler import profile_dataset
from dagsmith.agents.recommender import recommend
from dagsmith.agents.understanding import understand
from dagsmith.catalog import repository
from dagsmith.models.catalog import CLASSIFICATION_TASKS, SUPERVISED_TASKS, AnalysisMode, Stage, Tags, TaskType
from dagsmith.store.db import session_scope

PACKAGE = Path(__file__).resolve().parents[2] / "include" / "dagsmith"


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
    size = next(c for c in builder.validate(spec, profile, intent, limited) if c.name == "dataset size")
    assert not size.passed and f"{top.microservice} limited to 100 rows" in size.detail


def test_shortfalls_say_what_blocks_and_what_only_costs_rank():
    data = dict(missing_features=["age"], categorical_features=["city"], n_rows=500, format="csv", quality=0.9,
                has_target=True)
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


def _task_families(tree: ast.AST):
    """Every literal set or tuple of two or more ``TaskType`` members, with its line."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Set | ast.Tuple) and len(node.elts) >= 2 and all(
                isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "TaskType"
                for e in node.elts):
            yield node.lineno, frozenset(TaskType[e.attr] for e in node.elts)


def test_the_supervised_and_classification_families_are_defined_once():
    """Whether a task is supervised or a classification is ``TaskType``'s to say, not each module's."""
    families = {frozenset(CLASSIFICATION_TASKS), frozenset(SUPERVISED_TASKS),
                frozenset(SUPERVISED_TASKS) - {TaskType.TIME_SERIES_FORECASTING},
                frozenset(TaskType) - frozenset(SUPERVISED_TASKS)}
    redefined = [f"{path.relative_to(PACKAGE)}:{line}"
                 for path in PACKAGE.rglob("*.py") if path.name != "catalog.py" or path.parent.name != "models"
                 for line, members in _task_families(ast.parse(path.read_text(encoding="utf-8")))
                 if members in families]
    assert not redefined, f"task families defined outside TaskType: {redefined}"
