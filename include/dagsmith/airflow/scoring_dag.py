"""The scoring DAG of a stored pipeline (``dagsmith_score_<id>``): new rows scored by a version of its model.

A platform team schedules or triggers scoring the way it does everything else on Airflow: through the REST API or
the UI with a ``dataset`` (and optionally an ``output``, a ``version``), or by an event on the pipeline's incoming
asset whose extra names the file (``{"dataset": "/data/customers-2026-12.csv"}``). The ``score`` task runs the same
sandboxed scoring step as ``dagsmith predict`` (``registry.predict``) and emits the predictions as the pipeline's
``scored`` asset, with the version, output, rows and drifted features in the event's extra. When features drifted
past the threshold (``DAGSMITH_DRIFT_THRESHOLD``), ``retrain_on_drift`` posts an event on the pipeline's dataset
asset naming the scored file, so a pipeline scheduled "on new data" retrains on it.

Paths are held to the data roots as for pipeline runs (``run_dataset``), the output's folder too; the DAG is its
owner's (and admins') under FAB, like the pipeline's own DAG.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from airflow.sdk import DAG, Param, task
from airflow.sdk.exceptions import AirflowFailException

from dagsmith.airflow import assets
from dagsmith.airflow.ownership import pipeline_access
from dagsmith.airflow.run_params import run_dataset, run_user, runtime_param
from dagsmith.config import Settings
from dagsmith.data.roots import DatasetRefused, confine_output
from dagsmith.errors import InputError
from dagsmith.execution.specs import score_dag_id
from dagsmith.models.plan import DagSpec

#: What the scored asset's event carries from the scoring summary.
EVENT_KEYS = ("version", "output", "rows", "drifted")


def build_scoring(spec: DagSpec, known: dict[str, str] | None = None) -> DAG:
    """The scoring DAG of one pipeline spec, visible to the same logins as the pipeline's own DAG."""
    pipeline_id = spec.pipeline_id
    source, incoming, scored = (assets.dataset_asset(spec.dataset), assets.incoming_asset(pipeline_id),
                                assets.scored_asset(pipeline_id))
    with DAG(
        dag_id=score_dag_id(pipeline_id),
        schedule=[incoming],
        catchup=False,
        tags=["dagsmith", "scoring"],
        doc_md=f"Scores new rows with the model of pipeline {pipeline_id}, **{spec.name}** ({spec.goal}).",
        params={
            "dataset": Param(None, type=["null", "string"],
                             description="The rows to score, under DAGSMITH_HOME/datasets or a DAGSMITH_DATA_ROOTS "
                                         "folder (an incoming asset event's extra may name it instead)."),
            "output": Param(None, type=["null", "string"],
                            description="Where to write the predictions (.csv or .parquet) in a data folder; "
                                        "default NAME.predictions.csv beside the rows."),
            "version": Param(None, type=["null", "integer"], minimum=1,
                             description="The model version to score with; default the champion."),
            "runtime": runtime_param(),
            "user": Param(spec.owner, type="string",
                          description="Who scores when no login triggers it (a UI or REST trigger is that login's)."),
        },
        default_args={"retries": 0, "owner": spec.owner},
        access_control=pipeline_access(spec.owner, spec.shared, known),
    ) as dag:

        @task(task_id="score", outlets=[scored])
        def score(params: dict | None = None, triggering_asset_events=None, dag_run=None,
                  outlet_events=None) -> dict[str, Any]:
            # Imported here: scoring loads the data stack, which a parse of the DAG file need not pay.
            from dagsmith.registry.predict import predict

            settings = Settings.from_env()
            given = assets.triggered_dataset(triggering_asset_events) or params["dataset"]
            if not given:
                raise AirflowFailException("name the rows to score: the dataset param, or an event on "
                                           f"{assets.incoming_asset(pipeline_id).uri} whose extra names the file")
            data = Path(run_dataset(given, settings))
            out = _output(params["output"], settings)
            user = run_user(dag_run.run_type, dag_run.triggering_user_name, params["user"])
            try:
                summary = predict(pipeline_id, data, out=out, number=params["version"], runtime=params["runtime"],
                                  user=user, settings=settings)
            except InputError as exc:
                raise AirflowFailException(str(exc)) from None
            outlet_events[scored].extra = {key: summary[key] for key in EVENT_KEYS}
            return summary

        @task.short_circuit(task_id="drifted")
        def drifted(summary: dict[str, Any]) -> bool:
            """Go on to ask for a retrain only when features drifted past the threshold."""
            return bool(summary["drifted"])

        @task(task_id="retrain_on_drift", outlets=[source])
        def retrain_on_drift(summary: dict[str, Any], outlet_events=None) -> list[str]:
            """An event on the pipeline's dataset asset naming the scored rows: a pipeline scheduled on new data
            retrains on them."""
            outlet_events[source].extra = {assets.DATASET_KEY: summary["dataset"], "drifted": summary["drifted"]}
            return summary["drifted"]

        summary = score()
        drifted(summary) >> retrain_on_drift(summary)
    return dag


def _output(given: str | None, settings: Settings) -> Path | None:
    """The output a run names, held to the data roots like its dataset (unless the local CLI runs it)."""
    if not given or settings.local_cli:
        return Path(given) if given else None
    try:
        return confine_output(given, settings)
    except DatasetRefused as exc:
        raise AirflowFailException(str(exc)) from None
