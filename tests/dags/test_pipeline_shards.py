"""Pipeline DAGs are split over the DAG files by pipeline id, and a parse for one DAG builds that DAG alone (the real
DAG files, parsed in-process as Airflow parses them, over many spec files)."""

from __future__ import annotations

import json
import os
import runpy

import pytest
from airflow.sdk.definitions.context import _AIRFLOW_PARSING_CONTEXT_DAG_ID

from dagsmith.airflow.local import DAGS_FOLDER
from dagsmith.airflow.ownership import FAB_AUTH_MANAGER, READ_AND_TRIGGER, owner_role, record_logins
from dagsmith.airflow.pipeline_shards import SHARDS, announce, dag_file_name, shard_of, shard_specs
from dagsmith.bench.dag_parsing import write_specs
from dagsmith.config import Settings
from dagsmith.execution.specs import dag_id, spec_file

PIPELINES = 40


@pytest.fixture
def specs(tmp_path, monkeypatch):
    """A home with spec files for pipelines 1 to PIPELINES, and files beside them that are not specs."""
    monkeypatch.setenv("DAGSMITH_HOME", str(tmp_path))
    folder = tmp_path / "pipelines"
    write_specs(folder, PIPELINES)
    (folder / "notes.pipeline.json").write_text("{}")
    (folder / "3.tmp").write_text("{")  # a spec being written
    return folder


def _parsing_for(monkeypatch, dag: str) -> None:
    """Parse as Airflow does for one DAG (the variable behind ``get_parsing_context``; Airflow's own context manager
    leaves it set afterwards)."""
    monkeypatch.setenv(_AIRFLOW_PARSING_CONTEXT_DAG_ID, dag)


def _pipeline_dags(dag_file) -> set[str]:
    return {name for name in runpy.run_path(str(dag_file)) if name.startswith("dagsmith_pipeline_")}


def _dag_files() -> list:
    return sorted(DAGS_FOLDER.glob("dagsmith_pipelines_*.py"))


def test_each_dag_file_builds_its_shard_and_together_every_pipeline(specs):
    assert [f.name for f in _dag_files()] == sorted(dag_file_name(shard) for shard in range(SHARDS))
    built = {}
    for shard in range(SHARDS):
        built[shard] = _pipeline_dags(DAGS_FOLDER / dag_file_name(shard))
        assert built[shard] == {dag_id(i) for i in range(1, PIPELINES + 1) if shard_of(i) == shard}
    assert sum(len(dags) for dags in built.values()) == PIPELINES


def test_a_parse_for_one_dag_builds_that_dag_alone(specs, monkeypatch):
    wanted = 21
    _parsing_for(monkeypatch, dag_id(wanted))
    built = {f.name: _pipeline_dags(f) for f in _dag_files()}
    assert {name: dags for name, dags in built.items() if dags} == {dag_file_name(wanted): {dag_id(wanted)}}
    assert shard_specs(specs, shard_of(wanted), dag_id(wanted)) == [spec_file(specs, wanted)]


def test_a_parse_for_another_dag_builds_no_pipeline(specs, monkeypatch):
    _parsing_for(monkeypatch, "dagsmith_build_pipeline")
    assert not set().union(*(_pipeline_dags(f) for f in _dag_files()))


def test_a_deleted_spec_retires_its_dag_at_the_next_parse(specs, monkeypatch):
    dag_file = DAGS_FOLDER / dag_file_name(17)
    assert dag_id(17) in _pipeline_dags(dag_file)
    spec_file(specs, 17).unlink()
    assert _pipeline_dags(dag_file) == {dag_id(i) for i in range(1, PIPELINES + 1) if shard_of(i) == shard_of(17)
                                        and i != 17}
    _parsing_for(monkeypatch, dag_id(17))  # a worker asked for it finds no DAG
    assert not _pipeline_dags(dag_file)


def test_a_broken_spec_hides_only_its_own_pipeline(specs):
    spec = json.loads(spec_file(specs, 9).read_text())
    del spec["steps"]
    spec_file(specs, 9).write_text(json.dumps(spec))
    misspelt = json.loads(spec_file(specs, 17).read_text())  # "modelling" misspelt: no stage of that name
    misspelt["steps"][0]["stage"] = "modeling"
    spec_file(specs, 17).write_text(json.dumps(misspelt))
    assert _pipeline_dags(DAGS_FOLDER / dag_file_name(9)) == {dag_id(1), dag_id(25), dag_id(33)}


def test_under_fab_a_pipeline_of_no_login_is_granted_to_admins_and_its_shard_loads_whole(specs, monkeypatch):
    """A DAG granting a role that does not exist fails the dag-processor's sync of the whole file: a pipeline whose
    owner is no login of the deployment is granted to no owner, and every pipeline of its file still loads."""
    monkeypatch.setenv("AIRFLOW__CORE__AUTH_MANAGER", FAB_AUTH_MANAGER)
    record_logins(Settings(home=specs.parent, database_url=None), {"bench": "user"})
    spec = json.loads(spec_file(specs, 9).read_text())
    spec_file(specs, 9).write_text(json.dumps({**spec, "owner": "ghost"}))
    dags = runpy.run_path(str(DAGS_FOLDER / dag_file_name(9)))
    assert {name for name in dags if name.startswith("dagsmith_pipeline_")} == {
        dag_id(i) for i in range(1, PIPELINES + 1) if shard_of(i) == shard_of(9)}
    assert dags[dag_id(9)].access_control == {}
    assert dags[dag_id(1)].access_control == {owner_role("bench"): READ_AND_TRIGGER}


def test_a_shard_out_of_range_is_refused(specs):
    with pytest.raises(ValueError, match=f"shard {SHARDS} is not one of 0 to {SHARDS - 1}"):
        shard_specs(specs, SHARDS, None)


def test_a_new_pipeline_marks_its_dag_file_changed_for_the_dag_processor(tmp_path):
    """The dag-processor parses changed files first: a pipeline's file is marked so, and only that file; a DAGs
    folder without it (read-only, elsewhere) changes nothing and fails nothing."""
    for shard in range(SHARDS):
        (tmp_path / f"dagsmith_pipelines_{shard}.py").write_text("")
        os.utime(tmp_path / f"dagsmith_pipelines_{shard}.py", (0, 0))
    announce(11, tmp_path)
    changed = [path.name for path in tmp_path.iterdir() if path.stat().st_mtime > 0]
    assert changed == [dag_file_name(11)]
    announce(11, tmp_path / "missing")
