"""A pipeline's DAG names what it reads and produces as Airflow Assets, and one scheduled 'on new data' waits on its
dataset's asset (the real DAG built from a spec; a real run's events are checked in tests/execution)."""

from __future__ import annotations

from types import SimpleNamespace

from airflow.sdk import Asset

from dagsmith.airflow import assets
from dagsmith.airflow.pipeline_dag import build
from dagsmith.models.plan import ON_NEW_DATA, DagSpec, DagStep


def spec(tmp_path, schedule: str | None) -> DagSpec:
    return DagSpec(pipeline_id=7, name="churn", goal="predict churn", owner="ana", dataset=str(tmp_path / "churn.csv"),
                   schedule=schedule, steps=[DagStep(position=0, stage="loading", microservice="tabular_loader")])


def test_on_new_data_waits_on_the_dataset_asset_and_the_finish_emits_model_and_predictions(tmp_path):
    dag = build(spec(tmp_path, ON_NEW_DATA))
    dataset = Asset(uri=(tmp_path / "churn.csv").as_uri())
    assert list(dag.timetable.asset_condition.objects) == [dataset]
    assert dag.get_task("start").inlets == [dataset]
    assert [a.uri for a in dag.get_task("finish").outlets] == ["dagsmith://pipelines/7/model",
                                                                 "dagsmith://pipelines/7/predictions"]


def test_a_cron_schedule_or_none_stays_a_time_schedule(tmp_path):
    assert build(spec(tmp_path, "0 3 * * 1")).timetable.expression == "0 3 * * 1"
    assert type(build(spec(tmp_path, None)).timetable).__name__ == "NullTimetable"


def test_an_event_may_name_a_newer_file_and_the_latest_one_wins():
    def event(extra):
        return SimpleNamespace(extra=extra)

    dataset = Asset(uri="file:///data/churn.csv")
    assert assets.triggered_dataset({dataset: [event({"dataset": "/data/a.csv"}), event({}),
                                               event({"dataset": "/data/b.csv"})]}) == "/data/b.csv"
    assert assets.triggered_dataset({dataset: [event({"rows": 10}), event(None)]}) is None
    assert assets.triggered_dataset(None) is None
