"""The meta-DAG ``dagsmith_build_pipeline``: the five agents as tasks, triggered from the UI, the API or a schedule.

profile >> intent >> recommend >> [choose] >> build >> execute. Agents pass their typed results along as JSON.
With ``interactive`` on, ``choose`` waits for a person to pick among the top 3 per stage in the Airflow UI
(Airflow's human-in-the-loop form); without an answer in time the top-ranked services are built.
``execute`` triggers the pipeline's own DAG (written by ``build`` as a spec file) and waits for it; until the
dag-processor has parsed the new DAG the trigger fails and Airflow retries it, which is how the task waits
for registration.
"""

from __future__ import annotations

import os
from datetime import timedelta

from airflow.providers.standard.operators.hitl import HITLEntryOperator
from airflow.providers.standard.operators.trigger_dagrun import TriggerDagRunOperator
from airflow.sdk import DAG, Param, task
from airflow.sdk.exceptions import AirflowFailException

from dagsmith.agents.builder import ChoiceError, parse_choices, top_choices_markdown
from dagsmith.agents.planner import EmptyCatalog, build_pipeline, recommend_stages
from dagsmith.agents.profiler import profile_dataset
from dagsmith.agents.understanding import understand
from dagsmith.airflow.pipeline_dag import run_dataset, runtime_param
from dagsmith.config import Settings
from dagsmith.data.readers import DatasetError
from dagsmith.execution.specs import write_spec
from dagsmith.models.intent import AmbiguousGoal, Intent, InvalidIntent
from dagsmith.models.plan import RankingMode, Recommendation
from dagsmith.models.profile import DatasetProfile
from dagsmith.reasoning.llm import model_reasoner

DAG_ID = "dagsmith_build_pipeline"
#: How long ``execute`` keeps retrying while the dag-processor registers a new pipeline DAG.
REGISTRATION_RETRIES = 30
REGISTRATION_DELAY = timedelta(seconds=10)
#: How long an interactive run waits for a person's choice before building the top-ranked services.
CHOICE_TIMEOUT = timedelta(seconds=int(os.environ.get("DAGSMITH_CHOICE_TIMEOUT_SECONDS", 1800)))
CHOICE_HELP = "One STAGE=MICROSERVICE per line, e.g. modelling=random_forest_classifier; empty keeps the top-ranked."


def _user_error(exc: Exception) -> AirflowFailException:
    """A mistake in the request (data, goal): fail at once with the message, no retries."""
    return AirflowFailException(str(exc))


def build() -> DAG:
    with DAG(
        dag_id=DAG_ID,
        schedule=None,
        catchup=False,
        tags=["dagsmith"],
        doc_md=__doc__,
        params={
            "dataset": Param(type="string", description="Path (or file:// URI) of the dataset, under "
                                                        "DAGSMITH_HOME/datasets or a DAGSMITH_DATA_ROOTS folder: CSV, "
                                                        "TSV, Parquet, JSON or Excel."),
            "goal": Param(type="string", minLength=1, description='What you want, e.g. "predict customer churn".'),
            "user": Param("anonymous", type="string", description="Who the pipeline belongs to."),
            "mode": Param(RankingMode.FULL.value, enum=[m.value for m in RankingMode],
                          description="Ranking mode (the others are the benchmark's ablations)."),
            "runtime": runtime_param(),
            "schedule": Param(None, type=["null", "string"],
                              description="Optional: retrain the built pipeline on a cron schedule, e.g. '0 3 * * 1', "
                                          "or 'on new data' (whenever its dataset's Airflow asset is updated)."),
            "choices": Param(None, type=["null", "string"],
                             description=CHOICE_HELP + " Ignored when a person answers 'choose'."),
            "shared": Param(False, type="boolean", description="Show the built pipeline to every user, not only "
                                                              "its owner."),
            "interactive": Param(False, type="boolean",
                                 description="Let a person choose among the top 3 microservices per stage (task "
                                             "'choose') before the pipeline is built."),
        },
    ) as dag:

        @task(task_id="profile")
        def profile(params: dict | None = None) -> dict:
            try:
                return profile_dataset(run_dataset(params["dataset"], Settings.from_env())).model_dump(mode="json")
            except DatasetError as exc:
                raise _user_error(exc) from None

        @task(task_id="intent")
        def intent(profile_json: dict, params: dict | None = None) -> dict:
            try:
                return understand(params["goal"], DatasetProfile.model_validate(profile_json),
                                  model_reasoner(Settings.from_env())).model_dump(mode="json")
            except (AmbiguousGoal, InvalidIntent) as exc:
                raise _user_error(exc) from None

        @task(task_id="recommend")
        def recommend(profile_json: dict, intent_json: dict, params: dict | None = None, ti=None) -> dict:
            try:
                result = recommend_stages(DatasetProfile.model_validate(profile_json), Intent.model_validate(intent_json),
                                          user=params["user"], mode=RankingMode(params["mode"]),
                                          settings=Settings.from_env())
            except EmptyCatalog as exc:
                raise _user_error(exc) from None
            ti.xcom_push(key="top_choices", value=top_choices_markdown(result))
            return result.model_dump(mode="json")

        @task.branch(task_id="ask_or_build")
        def ask_or_build(params: dict | None = None) -> list[str]:
            return ["choose", "build"] if params["interactive"] else ["build"]  # build waits for choose

        choose = HITLEntryOperator(
            task_id="choose",
            subject="Choose the microservices for: {{ params.goal }}",
            body="{{ ti.xcom_pull(task_ids='recommend', key='top_choices') }}",
            # The run's own 'choices' (null when the trigger form leaves it empty) prefills this field, so it
            # takes the same types as the DAG's param.
            params={"choices": Param(None, type=["null", "string"], description=CHOICE_HELP)},
            defaults=[HITLEntryOperator.OK],
            response_timeout=CHOICE_TIMEOUT,
        )

        @task(task_id="build", trigger_rule="none_failed_min_one_success")
        def build_step(profile_json: dict, intent_json: dict, recommendation_json: dict,
                       params: dict | None = None, ti=None) -> int:
            settings = Settings.from_env()
            answer = ti.xcom_pull(task_ids="choose") or {}  # nothing when the run is not interactive
            chosen = (answer.get("params_input") or {}).get("choices") or params.get("choices") or ""
            try:
                choices = parse_choices(str(chosen).splitlines())
                spec = build_pipeline(DatasetProfile.model_validate(profile_json), Intent.model_validate(intent_json),
                                      Recommendation.model_validate(recommendation_json),
                                      data=run_dataset(params["dataset"], settings),
                                      user=params["user"], settings=settings, schedule=params.get("schedule"),
                                      shared=bool(params.get("shared")), choices=choices)
            except ChoiceError as exc:
                raise _user_error(exc) from None
            if not spec.valid:
                raise AirflowFailException("the pipeline failed its checks: "
                                           + "; ".join(c.detail for c in spec.checks if not c.passed))
            write_spec(spec.id, settings)
            return spec.id

        profiled = profile()
        understood = intent(profiled)
        ranked = recommend(profiled, understood)
        pipeline_id = build_step(profiled, understood, ranked)
        branch = ask_or_build()
        ranked >> branch >> [choose, pipeline_id]
        choose >> pipeline_id
        execute = TriggerDagRunOperator(
            task_id="execute",
            trigger_dag_id="dagsmith_pipeline_{{ ti.xcom_pull(task_ids='build') }}",
            conf={"dataset": "{{ params.dataset }}", "runtime": "{{ params.runtime }}", "user": "{{ params.user }}"},
            wait_for_completion=True,
            poke_interval=5,
            retries=REGISTRATION_RETRIES,
            retry_delay=REGISTRATION_DELAY,
        )
        pipeline_id >> execute
    return dag
