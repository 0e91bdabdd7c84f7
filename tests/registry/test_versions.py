"""The model registry's records on the real embedded PostgreSQL: numbering, statuses, promotion and rollback by hand,
and no version left half-written when its record cannot be committed."""

from __future__ import annotations


import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from dagsmith.config import ConfigurationError, Settings
from dagsmith.errors import InputError
from dagsmith.registry import versions
from dagsmith.registry.versions import Decision
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from tests.registry.conftest import frozen, register


def _statuses(settings, pipeline_id: int) -> dict[int, str]:
    with session_scope(settings) as session:
        return {r.version: r.status for r in versions.versions(session, pipeline_id)}


def test_versions_are_numbered_and_only_a_better_one_replaces_the_champion(settings, pipeline):
    pipeline_id, run = pipeline
    first = register(settings, pipeline_id, run, Decision(True, "the first version of the pipeline"), ".a")
    kept = register(settings, pipeline_id, run, Decision(False, "worse; the champion is kept"), ".b")
    better = register(settings, pipeline_id, run, Decision(True, "at least as good"), ".c")
    assert [first["version"], kept["version"], better["version"]] == [1, 2, 3]
    assert [first["status"], kept["status"], better["status"]] == ["champion", "challenger", "champion"]
    assert _statuses(settings, pipeline_id) == {1: "retired", 2: "challenger", 3: "champion"}
    assert better["decision"]["replaced"] == 1 and kept["decision"]["reason"] == "worse; the champion is kept"
    folder = versions.pipeline_folder(settings, pipeline_id)
    assert sorted(p.name for p in folder.iterdir()) == ["v1", "v2", "v3"]  # the frozen folders renamed into place
    assert better["path"] == str(folder / "v3") and (folder / "v3" / "schema.json").is_file()


def test_promote_and_rollback_by_hand(settings, pipeline):
    pipeline_id, run = pipeline
    register(settings, pipeline_id, run, Decision(True, "first"), ".a")
    register(settings, pipeline_id, run, Decision(False, "worse"), ".b")
    with pytest.raises(InputError, match="replaced no champion"):
        versions.rollback(settings, pipeline_id, None, by="ana")
    promoted = versions.promote(settings, pipeline_id, 2, by="bo")
    assert promoted["status"] == "champion" and promoted["decision"]["by"] == "bo"
    assert promoted["decision"]["history"][0]["reason"] == "worse"  # the rule's verdict is kept
    assert _statuses(settings, pipeline_id) == {1: "retired", 2: "champion"}
    back = versions.rollback(settings, pipeline_id, None, by="ana")
    assert back["version"] == 1 and "rolled back from v2" in back["decision"]["reason"]
    assert _statuses(settings, pipeline_id) == {1: "champion", 2: "retired"}
    with pytest.raises(InputError, match="already the champion"):
        versions.promote(settings, pipeline_id, 1, by="ana")
    with pytest.raises(InputError, match="no version 7; its versions: 1, 2"):
        versions.promote(settings, pipeline_id, 7, by="ana")


def test_a_version_whose_record_fails_leaves_no_folder(settings, pipeline):
    pipeline_id, run = pipeline
    folder = frozen(settings, pipeline_id, ".a")
    with pytest.raises(IntegrityError):  # no such run: the row is refused at commit
        versions.register(settings, pipeline_id, run + 100, folder, Decision(True, "first"), compared=None,
                          metrics={}, fingerprint="f" * 64, table_schema={})
    assert list(versions.pipeline_folder(settings, pipeline_id).iterdir()) == []
    with session_scope(settings) as session:
        assert session.scalars(select(schema.ModelVersion)).all() == []
    assert register(settings, pipeline_id, run, Decision(True, "first"), ".b")["version"] == 1


def test_a_champion_crowned_during_the_comparison_keeps_the_newcomer_a_challenger(settings, pipeline):
    pipeline_id, run = pipeline
    register(settings, pipeline_id, run, Decision(True, "first"), ".a")
    late = versions.register(settings, pipeline_id, run, frozen(settings, pipeline_id, ".b"),
                             Decision(True, "first"), compared=None, metrics={}, fingerprint="f" * 64,
                             table_schema={})
    assert late["status"] == "challenger" and "became v1 while this version was compared" in \
        late["decision"]["reason"]


def test_a_pipeline_without_versions_says_so(settings, pipeline):
    with session_scope(settings) as session, pytest.raises(InputError, match="has no model versions yet"):
        versions.find(session, pipeline[0], None)


def test_the_model_root_and_drift_threshold_come_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("DAGSMITH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("DAGSMITH_MODEL_ROOT", raising=False)
    monkeypatch.delenv("DAGSMITH_DRIFT_THRESHOLD", raising=False)
    default = Settings.from_env()
    assert default.models_dir == tmp_path / "home" / "models" and default.drift_threshold == 0.2
    monkeypatch.setenv("DAGSMITH_MODEL_ROOT", str(tmp_path / "shared-models"))
    monkeypatch.setenv("DAGSMITH_DRIFT_THRESHOLD", "0.1")
    chosen = Settings.from_env()
    assert chosen.models_dir == tmp_path / "shared-models" and chosen.drift_threshold == 0.1
    monkeypatch.setenv("DAGSMITH_DRIFT_THRESHOLD", "lots")
    with pytest.raises(ConfigurationError, match="DAGSMITH_DRIFT_THRESHOLD must be a positive number"):
        Settings.from_env()
