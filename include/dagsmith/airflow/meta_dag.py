"""The meta-DAG ``dagsmith_build_pipeline``: the five agents as tasks, triggered from the UI, the API or a schedule.

profile >> intent >> recommend >> [choose] >> build >> execute. Agents pass their typed results along as JSON.
A goal naming several columns to predict is the intent task's question, unless it asks for a model of each ("predict
both price and rooms") or the run's ``each_target`` does: then ``intent`` returns one intent per target, and
recommend, build and execute are mapped over them (one pipeline per target, each built and run as its own DAG).
With ``interactive`` on, ``choose`` waits for a person to pick among the top 3 per stage in the Airflow UI
(Airflow's human-in-the-loop form); without an answer in time the top-ranked services are built.
``execute`` triggers the pipeline's own DAG (written by ``build`` as a spec file) and waits for it; until the
dag-processor has parsed the new DAG (``build`` marks its DAG file changed, so that takes seconds) the trigger fails
and Airflow retries it, which is how the task waits for registration.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

from airflow.configuration import conf
from airflow.providers.standard.operators.hitl import HITLEntryOperator
from airflow.providers.standard.operators.trigger_dagrun import TriggerDagRunOperator
from airflow.sdk import DAG, Param, task
from airflow.sdk.exceptions import AirflowFailException

from dagsmith.agents.builder import ChoiceError, parse_choices, top_choices_markdown
from dagsmith.agents.intent.given import KNOWN_METRICS, FieldError
from dagsmith.agents.planner import EmptyCatalog, build_pipeline, recommend_stages
from dagsmith.agents.profiler import profile_dataset
from dagsmith.agents.understanding import understand_targets
from dagsmith.airflow.ownership import everyone
from dagsmith.airflow.pipeline_dag import run_dataset, runtime_param
from dagsmith.airflow.pipeline_shards import announce
from dagsmith.config import Settings
from dagsmith.data.readers import DatasetError
from dagsmith.execution.specs import dag_id, write_spec
from dagsmith.models.catalog import TaskType
from dagsmith.models.intent import AmbiguousGoal, ConstraintKind, GivenFields, Intent, InvalidIntent, SeveralTargets
from dagsmith.models.plan import RankingMode, Recommendation
from dagsmith.models.profile import DatasetProfile
from dagsmith.reasoning.llm import model_reasoner

DAG_ID = "dagsmith_build_pipeline"
#: How long ``execute`` keeps retrying while the dag-processor registers a new pipeline DAG.
REGISTRATION_RETRIES = 60
REGISTRATION_DELAY = timedelta(seconds=5)
#: How long an interactive run waits for a person's choice before building the top-ranked services.
CHOICE_TIMEOUT = timedelta(seconds=int(os.environ.get("DAGSMITH_CHOICE_TIMEOUT_SECONDS", 1800)))
CHOICE_HELP = ("One STAGE=MICROSERVICE per line, e.g. modelling=random_forest_classifier; empty keeps the top-ranked. "
               "With one pipeline per target, TARGET: STAGE=MICROSERVICE chooses for that target's only.")
#: How a run asks for one pipeline per target, told when a goal names several targets without asking for it.
EACH_TARGET_HINT = "Or trigger the run with each_target set to build one pipeline per target."


def _user_error(exc: Exception) -> AirflowFailException:
    """A mistake in the request (data, goal): fail at once with the message, no retries."""
    return AirflowFailException(f"{exc} {EACH_TARGET_HINT}" if isinstance(exc, SeveralTargets) else str(exc))


def build() -> DAG:
    with DAG(
        dag_id=DAG_ID,
        schedule=None,
        catchup=False,
        tags=["dagsmith"],
        doc_md=__doc__,
        access_control=everyone(),  # under FAB: every login sees it, those who may build trigger it
        params={
            "dataset": Param(type="string", description="Path (or file:// URI) of the dataset, under "
                                                        "DAGSMITH_HOME/datasets or a DAGSMITH_DATA_ROOTS folder: CSV, "
                                                        "TSV, Parquet, JSON or Excel."),
            "goal": Param("", type="string", description='What you want, e.g. "predict customer churn"; may be '
                                                        'empty when target (or a task that predicts nothing) says it.'),
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
            "each_target": Param(False, type="boolean", description="Build and run one pipeline per target when the "
                                                                    "goal names several columns to predict."),
            # fields stated instead of words (``GivenFields``): each wins over the goal's reading of it
            "target": Param(None, type=["null", "string"], description="Optional: the column to predict."),
            "task": Param(None, type=["null", "string"], enum=[None, *(t.value for t in TaskType)],
                          description="Optional: the task."),
            "metric": Param(None, type=["null", "string"], enum=[None, *KNOWN_METRICS],
                            description="Optional: what the candidate models are compared by."),
            "exclude": Param([], type="array", items={"type": "string"},
                             description="Optional: columns no step uses as features, one per line."),
            "time_budget": Param(None, type=["null", "integer"], minimum=1,
                                 description="Optional: seconds the run may take; the model search gets 60%."),
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
        def intent(profile_json: dict, params: dict | None = None) -> list[dict]:
            try:
                intents = understand_targets(params["goal"], DatasetProfile.model_validate(profile_json),
                                             model_reasoner(Settings.from_env()),
                                             each_target=bool(params.get("each_target")),
                                             given=GivenFields.from_conf(params))
            except (AmbiguousGoal, InvalidIntent, FieldError) as exc:
                raise _user_error(exc) from None
            return [i.model_dump(mode="json") for i in intents]

        @task(task_id="recommend")
        def recommend(profile_json: dict, intent_json: dict, params: dict | None = None, ti=None) -> dict:
            planned = Intent.model_validate(intent_json)
            try:
                result = recommend_stages(DatasetProfile.model_validate(profile_json), planned, user=params["user"],
                                          mode=RankingMode(params["mode"]), settings=Settings.from_env())
            except EmptyCatalog as exc:
                raise _user_error(exc) from None
            aimed = planned.target if planned.asks(ConstraintKind.EACH_TARGET) else None
            ti.xcom_push(key="top_choices", value=top_choices_markdown(result, aimed))
            return result.model_dump(mode="json")

        @task.branch(task_id="ask_or_build")
        def ask_or_build(params: dict | None = None) -> list[str]:
            return ["choose", "build"] if params["interactive"] else ["build"]  # build waits for choose

        choose = HITLEntryOperator(
            task_id="choose",
            subject="Choose the microservices for: {{ params.goal }}",
            body="{{ ti.xcom_pull(task_ids=['recommend'], key='top_choices') | join('\n') }}",  # one per target
            # The run's own 'choices' (null when the trigger form leaves it empty) prefills this field, so it
            # takes the same types as the DAG's param.
            params={"choices": Param(None, type=["null", "string"], description=CHOICE_HELP)},
            defaults=[HITLEntryOperator.OK],
            response_timeout=CHOICE_TIMEOUT,
        )

        @task(task_id="build", trigger_rule="none_failed_min_one_success")
        def build_step(profile_json: dict, planned: tuple[dict, dict], params: dict | None = None, ti=None) -> int:
            settings = Settings.from_env()
            answer = ti.xcom_pull(task_ids="choose") or {}  # nothing when the run is not interactive
            chosen = (answer.get("params_input") or {}).get("choices") or params.get("choices") or ""
            planned_intent, recommendation_json = Intent.model_validate(planned[0]), planned[1]
            try:
                choices = parse_choices(str(chosen).splitlines(), planned_intent.target,
                                        planned_intent.asks(ConstraintKind.EACH_TARGET) or [])
                spec = build_pipeline(DatasetProfile.model_validate(profile_json), planned_intent,
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
            announce(spec.id, Path(conf.get("core", "dags_folder")))  # so that execute finds the DAG soon
            return spec.id

        profiled = profile()
        understood = intent(profiled)  # one intent per pipeline: the map every later task is expanded over
        ranked = recommend.partial(profile_json=profiled).expand(intent_json=understood)
        pipeline_ids = build_step.partial(profile_json=profiled).expand(planned=understood.zip(ranked))
        branch = ask_or_build()
        ranked >> branch >> [choose, pipeline_ids]
        choose >> pipeline_ids
        TriggerDagRunOperator.partial(
            task_id="execute",
            conf={"dataset": "{{ params.dataset }}", "runtime": "{{ params.runtime }}", "user": "{{ params.user }}"},
            wait_for_completion=True,
            poke_interval=5,
            retries=REGISTRATION_RETRIES,
            retry_delay=REGISTRATION_DELAY,
        ).expand(trigger_dag_id=pipeline_ids.map(dag_id))
    return dag
