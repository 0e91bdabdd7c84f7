"""The child DAG of a stored pipeline: one task per step, edges = data flow, self-healing on retry.

DAGs are generated from spec files (written from the pipeline's database row by ``write_spec``), so parsing
never queries the database. A run takes ``dataset`` as a parameter, so upstream systems can re-run a
pipeline on new data (inside the data roots: ``run_dataset``); a spec may carry a cron schedule for
retraining, or retrain whenever its dataset's asset is updated (``airflow.assets``). Each step task resolves its
microservice from the step's row when it runs, which is what lets healing swap services between tries. A
modelling step with a search is one task per candidate model, side by side, and a selection task after them
(``execution.search``); where a run's tasks run one at a time (``ONE_AT_A_TIME_VARIABLE``), one task fits the
candidates side by side instead.
"""

from __future__ import annotations

import logging
import os
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from airflow.sdk import DAG, Param, get_parsing_context, task
from airflow.sdk.exceptions import AirflowFailException

from dagsmith.airflow import assets
from dagsmith.airflow.ownership import fab, logins, pipeline_access
from dagsmith.airflow.pipeline_shards import shard_specs
from dagsmith.airflow.run_params import run_dataset, run_user, runtime_param, self_healing_param
from dagsmith.airflow.scoring_dag import build_scoring
from dagsmith.airflow.step_operator import StepOperator
from dagsmith.airflow.stopping import STARTED, refuse_if_stopping
from dagsmith.config import Settings
from dagsmith.execution import closing
from dagsmith.execution import run as execution
from dagsmith.execution.specs import dag_id, read_spec, specs_dir
from dagsmith.healing import policy as healing
from dagsmith.models.airflow import ONE_AT_A_TIME_VARIABLE, SUMMARY_XCOM
from dagsmith.models.plan import DagSpec, DagStep

if TYPE_CHECKING:
    from dagsmith.airflow.pod_operator import StepPodOperator

    StepTask = StepOperator | StepPodOperator

log = logging.getLogger(__name__)


def _heal_on_retry(context) -> None:
    """Retry callback: decide the substitute now; the next try re-checks, so a lost callback is harmless."""
    ti = context["ti"]
    execution_id = ti.xcom_pull(task_ids="start")
    position = int(ti.task_id.split("_", 2)[1])
    try:
        decision = healing.heal(execution_id, position, settings=Settings.from_env(),
                                self_healing=context["params"]["self_healing"])
        if decision:
            log.info("self-healing: %s", decision.reason)
    except healing.CandidatesExhausted as exc:
        log.error("self-healing: %s", exc)


def build(spec: DagSpec, known: dict[str, str] | None = None, settings: Settings | None = None) -> DAG:
    """The child DAG for one pipeline spec; with ``known`` logins (under FAB) granted to its owner only if they are
    one of them (``ownership.pipeline_access``). Its steps run as the ``settings``' runtime makes them and go to its
    Celery queue (``DAGSMITH_QUEUE``; other executors ignore it), its bookkeeping tasks to Airflow's default queue."""
    settings = settings or Settings.from_env()
    steps = spec.steps
    retries = healing.retries_for([s.alternatives for s in steps])
    operator, queue = _step_operator(settings.runtime), settings.queue
    source = assets.dataset_asset(spec.dataset)
    with DAG(
        dag_id=dag_id(spec.pipeline_id),
        schedule=assets.schedule_for(spec, source),
        catchup=False,
        max_active_runs=1,  # runs of one pipeline never overlap: a retrain waits for the run before it
        tags=["dagsmith", "pipeline"],
        doc_md=spec.explanation or f"**{spec.name}**: {spec.goal} (owner {spec.owner}).",
        params={
            "dataset": Param(spec.dataset, type="string",
                             description="Path of the dataset to run on, under DAGSMITH_HOME/datasets or a "
                                         "DAGSMITH_DATA_ROOTS folder."),
            "runtime": runtime_param(),
            "self_healing": self_healing_param(),
            "user": Param(spec.owner, type="string",
                          description="Whose run this is (for learning) when no login triggers it: a run triggered "
                                      "from the UI or the REST API is that login's."),
        },
        default_args={"retries": 0, "owner": spec.owner},  # shown as the DAG's owner in Airflow
        access_control=pipeline_access(spec.owner, spec.shared, known),  # who sees and triggers it under FAB
    ) as dag:

        @task(task_id="start", inlets=[source])
        def start(params: dict | None = None, run_id: str | None = None, triggering_asset_events=None,
                  dag_run=None) -> int:
            refuse_if_stopping()
            settings = Settings.from_env()
            given = assets.triggered_dataset(triggering_asset_events) or params["dataset"]
            dataset = run_dataset(given, settings)  # before anything is recorded or copied
            user = run_user(dag_run.run_type, dag_run.triggering_user_name, params["user"])
            execution_id = execution.start(spec.pipeline_id, dataset, user=user, run_id=run_id, settings=settings)
            STARTED.append(execution_id)  # what a stop of this process's run records interrupted (``watch``)
            return execution_id

        started = start()
        entries, exits = {}, {}  # per step position: the tasks its inputs feed, and the task its output comes from
        for step in steps:
            if step.search:
                entries[step.position], exits[step.position] = _search_tasks(step, started, operator, queue)
            else:
                node = _step_task(step, retries, spec, operator, queue)
                started >> node
                entries[step.position], exits[step.position] = [node], node
        for step in steps:  # every step also reads the execution id from start, which orders it after start
            for parent in step.depends_on:
                exits[parent] >> entries[step.position]

        model, predictions = assets.model_asset(spec.pipeline_id), assets.predictions_asset(spec.pipeline_id)

        @task(task_id="finish", trigger_rule="all_done", outlets=[model, predictions])
        def finish(execution_id: int | None, ti=None, outlet_events=None) -> dict:
            if execution_id is None:  # start refused the run (a dataset outside the roots, say): nothing to close
                raise AirflowFailException(f"pipeline {spec.pipeline_id} did not start; see the start task's log")
            refuse_if_stopping()  # the stop records the run; closing it here would race that
            summary = closing.finish(execution_id, settings=Settings.from_env())
            result = summary.model_dump(mode="json")  # what whoever ran the DAG reads back (``SUMMARY_XCOM``)
            if not summary.completed:
                ti.xcom_push(SUMMARY_XCOM, result)  # a failed task returns nothing: the summary is read all the same
                raise AirflowFailException(f"pipeline {spec.pipeline_id} failed; see the execution's trace")
            for produced in (model, predictions):  # emitted only when the task succeeds
                outlet_events[produced].extra = assets.produced(summary)
            return result

        done = finish(started)
        for position, node in exits.items():
            [*entries[position], node] >> done
    return dag


#: The longest wait between a step's tries, in retry delays. Backoff doubles the wait at each try: uncapped, a
#: step's 15th try would wait 2^14 delays (a day at the default 5 s); capped, about 2.5 minutes.
MAX_BACKOFF = 32


def _step_operator(runtime: str) -> type[StepTask]:
    """The operator of every step: a pod where the DAGs are parsed for the kubernetes runtime (imported only then),
    else a container, whose task also runs the local runtime."""
    if runtime == "kubernetes":
        from dagsmith.airflow.pod_operator import StepPodOperator

        return StepPodOperator
    return StepOperator


def _step_task(step: DagStep, retries: int, spec: DagSpec, operator: type[StepTask], queue: str) -> StepTask:
    """One step, healed between tries: each try runs the step's current microservice."""
    delay = timedelta(seconds=spec.retry_delay_seconds)
    return operator(task_id=f"step_{step.position:02d}_{step.stage}__{step.microservice}", position=step.position,
                    queue=queue, retries=retries, retry_delay=delay, retry_exponential_backoff=True,
                    max_retry_delay=delay * MAX_BACKOFF, on_retry_callback=_heal_on_retry)


def _search_tasks(step: DagStep, started, operator: type[StepTask], queue: str) -> tuple[list, object]:
    """A modelling search: one task per candidate model on the same input (one for them all where tasks run one at a
    time), then the task that picks the winner."""
    position, stage = step.position, step.stage

    @task(task_id=f"step_{position:02d}_{stage}__select", trigger_rule="all_done")
    def select(execution_id: int | None) -> dict:
        if execution_id is None:
            raise AirflowFailException("the run did not start; see the start task's log")
        refuse_if_stopping()
        try:
            # Imported here: the search's blending loads scikit-learn, which a parse of the DAG file need not pay.
            from dagsmith.execution.search import select_model

            return select_model(execution_id, position, settings=Settings.from_env()).model_dump(mode="json")
        except healing.CandidatesExhausted as exc:
            raise AirflowFailException(str(exc)) from None

    if os.environ.get(ONE_AT_A_TIME_VARIABLE) and operator is StepOperator:
        # a task each would run one after another; a pod's task drives its pod, so pods keep a task each
        candidates = [operator(task_id=f"step_{position:02d}_{stage}__candidates", position=position,
                               candidates=tuple(step.search.candidates), queue=queue, retries=0)]
    else:
        candidates = [operator(task_id=f"step_{position:02d}_{stage}__{name}", position=position, candidate=name,
                               queue=queue, retries=0)  # a failed candidate is one fewer to choose from
                      for name in step.search.candidates]
    chosen = select(started)
    started >> candidates
    candidates >> chosen
    return candidates, chosen


def load_dags(specs: list[Path]) -> dict[str, DAG]:
    """The pipeline DAGs of these spec files, each with its scoring DAG (``scoring_dag``); a broken or vanished spec
    is logged and skipped: one bad spec never fails the DAG file, which would take every other pipeline of it away."""
    settings = Settings.from_env()
    known = logins(settings) if specs and fab() else None
    dags = {}
    for path in specs:
        try:
            spec = read_spec(path)
            built = [build(spec, known, settings), build_scoring(spec, known)]
        except Exception as exc:  # noqa: BLE001 - a spec's fault is its pipeline's alone, whatever it is
            log.error("skipping pipeline spec %s: %s", path, exc)
            continue
        dags |= {dag.dag_id: dag for dag in built}
    return dags


def shard_dags(shard: int) -> dict[str, DAG]:
    """What ``dags/dagsmith_pipelines_<shard>.py`` defines: its shard's pipeline DAGs, or only the one DAG Airflow
    parses for (``pipeline_shards``). A deleted spec file retires its DAG at the next parse."""
    folder = specs_dir(Settings.from_env())
    return load_dags(shard_specs(folder, shard, get_parsing_context().dag_id))
