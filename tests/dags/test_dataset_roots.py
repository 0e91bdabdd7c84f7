"""A run triggered from outside the local CLI reads datasets inside the data roots only; the CLI's own runs read
any file (real ``dag.test()`` runs, a deployment's environment or the CLI's, against the real store)."""

from __future__ import annotations

from sqlalchemy import func, select

from dagsmith import datasets
from dagsmith.agents.planner import plan
from dagsmith.airflow.pipeline_shards import dag_file_name
from dagsmith.execution.specs import dag_id, write_spec
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from tests.dags.test_meta_dag import penguins_in, run_dag

CANARY = "canary_5c02ef"
REFUSED = "is outside the data folders this deployment reads datasets from"


def _pipelines_of(settings, owner: str) -> list[schema.Pipeline]:
    with session_scope(settings) as session:
        return list(session.scalars(select(schema.Pipeline).where(schema.Pipeline.owner == owner)))


def test_a_triggered_meta_dag_refuses_a_dataset_outside_the_roots_and_the_cli_reads_it(catalog_settings, tmp_path):
    outside = tmp_path / "outside.csv"
    datasets.load("penguins").assign(**{CANARY: 1}).to_csv(outside, index=False)  # the canary is in its first line
    conf = {"dataset": str(outside), "goal": "predict the species"}

    state, output = run_dag(catalog_settings, {**conf, "on_behalf_of": "roots-trigger"})
    assert state == "failed" and f"the dataset {outside} {REFUSED}" in output, output[-4000:]
    assert "DAGSMITH_DATA_ROOTS" in output and CANARY not in output
    assert not _pipelines_of(catalog_settings, "roots-trigger")

    state, output = run_dag(catalog_settings, {**conf, "on_behalf_of": "roots-cli"}, local_cli=True)
    assert state == "success", output[-4000:]
    assert [p.dataset for p in _pipelines_of(catalog_settings, "roots-cli")] == [str(outside.resolve())]


def test_a_triggered_pipeline_run_refuses_a_link_out_of_the_roots_before_recording_anything(catalog_settings, embedder,
                                                                                           tmp_path):
    inside = penguins_in(catalog_settings.home / "datasets" / tmp_path.name)
    pipeline = plan(inside, "predict the species", user="roots-rerun", settings=catalog_settings,
                    embedder=embedder).pipeline
    write_spec(pipeline.id, catalog_settings)
    outside = tmp_path / "outside.csv"
    outside.write_text(f"{CANARY},species\n1,Adelie\n")
    link = inside.with_name("innocent.csv")
    link.symlink_to(outside)

    state, output = run_dag(catalog_settings, {"dataset": str(link)}, dag_file=dag_file_name(pipeline.id),
                            name=dag_id(pipeline.id))
    assert state == "failed" and f"the dataset {link} {REFUSED} (symbolic links followed)" in output, output[-4000:]
    assert CANARY not in output
    with session_scope(catalog_settings) as session:
        assert session.scalar(select(func.count()).select_from(schema.Execution)
                              .where(schema.Execution.pipeline_id == pipeline.id)) == 0
