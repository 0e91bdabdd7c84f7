"""The meta-DAG ``dagsmith_build_pipeline``: the five agents as tasks, triggered from the UI, the API or a schedule.

A clear goal is planned in one task: ``plan`` settles whose pipeline it is, profiles the data, reads the goal,
ranks the services and builds the pipelines, and ``execute`` runs them. An agent a task each would wait for the
scheduler between every two of them (a second or so each on a deployment); ``plan`` goes straight through. The
other tasks are for what a person answers first, and are skipped otherwise:
ask >> [clarify] >> understood >> recommend >> [choose] >> build >> execute_built.
A goal the reader is unsure of is asked in Airflow (``clarify``, ``airflow.goal_questions``): a person picks one of
its likeliest readings (or types a target and task) in the UI's Required Actions or through the REST API, and the run
goes on with it; nobody answering in time fails the run, and a run made in-process (``dag.test()``), which nobody
logged in to answer, fails with the question at once. With ``interactive`` on, ``choose`` waits for a person to pick
among the top 3 per stage in the Airflow UI (Airflow's human-in-the-loop form); without an answer in time the
top-ranked services are built. Agents pass their typed results along as JSON.
A goal naming several columns to predict is the plan task's question, unless it asks for a model of each ("predict
both price and rooms") or the run's ``each_target`` does: then there is one intent per target and one pipeline per
target, each run as its own DAG (``recommend`` and the executes are mapped over them; ``build``, like ``plan``,
stores every target's pipeline or none).
``execute`` triggers a pipeline's own DAG (written as a spec file) and waits for it; until the dag-processor has
parsed the new DAG (the build marks its DAG file changed, so that takes seconds) the trigger fails and Airflow
retries it, which is how the task waits for registration, for ``REGISTRATION_RETRIES`` tries.

Whose pipeline a run builds is decided by who triggered it, never by its conf (``airflow.build_owner``); the plan
task says who built for whom. Under the FAB auth manager a DAG's runs (their conf, task logs and XComs) are read by
whoever may read the DAG: Airflow has no per-run rights. So each login who may build has a build DAG of its own,
``dagsmith_build_pipeline_for_<login>`` (``builder_dag_id``), read and triggered by that login and admins only, and
``dagsmith_build_pipeline`` is granted to no one but admins. Under the simple auth manager (one person on a machine)
there is ``dagsmith_build_pipeline`` alone. The profile holds values from the data (each column's most frequent
ones, which the goal's reading uses): the run records only its shape and quality in XCom, as the owner's page shows
them, and its later tasks read the whole profile from a file named after the run (``profile_file``) that only the
deployment reads.
"""

from __future__ import annotations

import hashlib
import logging
import os
from datetime import timedelta
from pathlib import Path

from airflow.configuration import conf
from airflow.providers.standard.operators.hitl import HITLEntryOperator, HITLOperator
from airflow.providers.standard.operators.trigger_dagrun import TriggerDagRunOperator
from airflow.sdk import DAG, Param, XComArg, get_parsing_context, task
from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

from dagsmith.agents.approval import top_choices_markdown
from dagsmith.agents.choices import ChoiceError, parse_choices
from dagsmith.agents.intent.given import KNOWN_METRICS, FieldError
from dagsmith.agents.planner import EmptyCatalog, build_pipelines, read_intents, recommend_stages, remember_reading
from dagsmith.agents.profiler import profile_dataset
from dagsmith.airflow.ownership import (BUILD_DAG_ID, READ_AND_TRIGGER, api_login, builder_dag_id, fab, logins,
                                       owner_role)
from dagsmith.airflow import goal_questions
from dagsmith.airflow.build_owner import owner_for
from dagsmith.airflow.run_params import run_dataset, runtime_param
from dagsmith.airflow.pipeline_shards import announce
from dagsmith.config import Settings
from dagsmith.errors import InputError
from dagsmith.execution.specs import dag_id, write_spec
from dagsmith.models.catalog import Stage, TaskType
from dagsmith.models.intent import AmbiguousGoal, ConstraintKind, GivenFields, Intent, Question, SeveralTargets
from dagsmith.models.plan import PipelineSpec, RankingMode, Recommendation
from dagsmith.models.profile import DatasetProfile
from dagsmith.store.db import session_scope

log = logging.getLogger(__name__)

DAG_ID = BUILD_DAG_ID
#: How long ``execute`` keeps retrying while the dag-processor registers a new pipeline DAG (it takes seconds once
#: announced; a read-only DAGs folder waits for the file's next parse, 30 s by default).
REGISTRATION_RETRIES = 18
REGISTRATION_DELAY = timedelta(seconds=5)
#: XComs of the plan task besides the pipelines it built: whose pipeline it is, the profile's shape and quality.
OWNER_KEY, PROFILE_KEY = "owner", "profile"
#: Logins with these roles may build, so they have a build DAG under FAB.
BUILDER_ROLES = ("user", "op")
#: How long an interactive run waits for a person's choice before building the top-ranked services.
CHOICE_TIMEOUT = timedelta(seconds=int(os.environ.get("DAGSMITH_CHOICE_TIMEOUT_SECONDS", 1800)))
CHOICE_HELP = ("One STAGE=MICROSERVICE per line, e.g. modelling=random_forest_classifier; empty keeps the top-ranked. "
               "With one pipeline per target, TARGET: STAGE=MICROSERVICE chooses for that target's only.")
#: How a run asks for one pipeline per target, told when a goal names several targets without asking for it.
EACH_TARGET_HINT = "Or trigger the run with each_target set to build one pipeline per target."


def _waiting_for_registration(context) -> None:
    """Retry callback of ``execute``: say what it waits for, and where to look when that lasts."""
    log.warning("the pipeline's DAG could not be triggered yet (try %s of %s: %s): waiting for the dag-processor to "
                "load it; if this lasts, see Airflow's import errors and the dag-processor's log",
                context["ti"].try_number, REGISTRATION_RETRIES + 1, context.get("exception"))


def _user_error(exc: Exception) -> AirflowFailException:
    """A mistake in the request (data, goal): fail at once with the message, no retries."""
    return AirflowFailException(f"{exc} {EACH_TARGET_HINT}" if isinstance(exc, SeveralTargets) else str(exc))


def profile_file(settings: Settings, dag_run) -> Path:
    """Where a run keeps its dataset's whole profile for its later tasks, named from the run alone (never from
    anything its conf or XComs say)."""
    key = hashlib.sha256(f"{dag_run.dag_id}/{dag_run.run_id}".encode()).hexdigest()[:32]
    return settings.home / "build-runs" / f"{key}.profile.json"


def _keep_profile(profile: DatasetProfile, settings: Settings, dag_run) -> dict:
    """Keep the whole profile for the run's later tasks; what the run records of it: no value from the data."""
    path = profile_file(settings, dag_run)
    path.parent.mkdir(parents=True, exist_ok=True)
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as file:
        file.write(profile.model_dump_json())
    return {"n_rows": profile.n_rows, "n_columns": profile.n_columns, "format": profile.format,
            "quality": profile.quality.model_dump(mode="json")}  # as the owner's plan page shows it


def _kept_profile(settings: Settings, dag_run) -> DatasetProfile:
    try:
        return DatasetProfile.model_validate_json(profile_file(settings, dag_run).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AirflowFailException("this run's profile of the dataset is gone: clear the plan task to make it "
                                   "again") from None


def _owner_of(ti) -> str:
    """The owner the plan task settled, for the tasks after it (never read from the run's conf)."""
    return ti.xcom_pull(task_ids="plan", key=OWNER_KEY)


def _read(params: dict, user: str, given: GivenFields, profile: DatasetProfile, *,
          answered: bool = False) -> list[dict]:
    """The goal's intents for the run's owner, as JSON. A reading the fields settle (given, or with ``answered`` the
    answer to a question about the goal) is remembered for these words on a table of these columns."""
    settings = Settings.from_env()
    try:
        intents = read_intents(params["goal"], profile, user=user, given=given,
                               each_target=bool(params.get("each_target")), settings=settings)
    except AmbiguousGoal as question:
        if not answered:
            raise  # for the plan task to ask
        raise _user_error(question) from None  # an answer that settles nothing is not asked about again
    except (Question, FieldError) as exc:
        raise _user_error(exc) from None
    if answered or given.settles:
        with session_scope(settings) as session:
            remember_reading(session, params["goal"], profile, intents, user=user,
                             how="answered" if answered else "given")
    return [i.model_dump(mode="json") for i in intents]


def _recommend(profile: DatasetProfile, intent: Intent, user: str, params: dict) -> Recommendation:
    settings = Settings.from_env()
    try:
        return recommend_stages(profile, intent, user=user, mode=RankingMode(params["mode"]), settings=settings)
    except EmptyCatalog as exc:
        raise _user_error(exc) from None


def _choices(intents: list[Intent], chosen: str | None, params: dict) -> list[dict[Stage, str]]:
    """A person's choice lines (``choose``'s answer, else the run's ``choices``) per intent, every line checked
    against the targets before any pipeline is built."""
    lines = str(chosen or params.get("choices") or "").splitlines()
    try:
        return [parse_choices(lines, intent.target, intent.asks(ConstraintKind.EACH_TARGET) or [])
                for intent in intents]
    except ChoiceError as exc:
        raise _user_error(exc) from None


def _build(profile: DatasetProfile, planned: list[tuple[Intent, Recommendation, dict[Stage, str]]], user: str,
           params: dict) -> list[int]:
    """Build and check every target's pipeline, then store them together and write their DAGs' specs; their ids.
    A target whose pipeline cannot be built, or fails its checks, stores none of them."""
    settings = Settings.from_env()
    try:
        specs = build_pipelines(profile, planned, data=run_dataset(params["dataset"], settings), user=user,
                                settings=settings, schedule=params.get("schedule"), shared=bool(params.get("shared")),
                                accept=_checked)
    except ChoiceError as exc:  # a chosen service the ranking does not offer, a model no catalog entry is
        raise _user_error(exc) from None
    for spec in specs:
        write_spec(spec.id, settings)
        announce(spec.id, Path(conf.get("core", "dags_folder")))  # so that execute finds the DAG soon
    return [spec.id for spec in specs]


def _checked(spec: PipelineSpec) -> None:
    if not spec.valid:
        raise AirflowFailException("the pipeline failed its checks: "
                                   + "; ".join(c.detail for c in spec.checks if not c.passed))


def _execute(task_id: str, pipeline_ids: XComArg) -> None:
    """Trigger each built pipeline's own DAG and wait for it; mapped over the ids, so skipped when there are none."""
    TriggerDagRunOperator.partial(
        task_id=task_id,
        conf={"dataset": "{{ params.dataset }}", "runtime": "{{ params.runtime }}",
              "user": f"{{{{ ti.xcom_pull(task_ids='plan', key='{OWNER_KEY}') }}}}"},
        wait_for_completion=True,
        poke_interval=5,
        retries=REGISTRATION_RETRIES,
        retry_delay=REGISTRATION_DELAY,
        on_retry_callback=_waiting_for_registration,
    ).expand(trigger_dag_id=pipeline_ids.map(dag_id))


def build_dags() -> dict[str, DAG]:
    """What ``dags/dagsmith_build_pipeline.py`` defines: ``dagsmith_build_pipeline``, and under FAB each builder's
    own build DAG (only the one Airflow parses for, when it parses for one)."""
    wanted = get_parsing_context().dag_id
    logins_ = [name for name, role in logins(Settings.from_env()).items() if role in BUILDER_ROLES] if fab() else []
    dags = {}
    for login in [None, *logins_]:
        dag_id_ = builder_dag_id(login) if login else DAG_ID
        if wanted is None or wanted == dag_id_:
            dags[dag_id_] = build(login)
    return dags


def build(login: str | None = None) -> DAG:
    """``dagsmith_build_pipeline``, or with ``login`` that login's build DAG."""
    admins_only = {"on_behalf_of": Param(None, type=["null", "string"],
                                         description="Admins only: the login the pipeline is built for (default: "
                                                     "the login that triggers the run).")}
    with DAG(
        dag_id=builder_dag_id(login) if login else DAG_ID,
        schedule=None,
        catchup=False,
        tags=["dagsmith"],
        doc_md=__doc__,
        # under FAB: a build DAG for its login (and admins), the shared one for admins only
        access_control={owner_role(login): READ_AND_TRIGGER} if login else {},
        params={
            "dataset": Param(type="string", description="Path (or file:// URI) of the dataset, under "
                                                        "DAGSMITH_HOME/datasets or a DAGSMITH_DATA_ROOTS folder: CSV, "
                                                        "TSV, Parquet, JSON or Excel."),
            "goal": Param("", type="string", description='What you want, e.g. "predict customer churn"; may be '
                                                        'empty when target (or a task that predicts nothing) says it.'),
            **({} if login else admins_only),
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
                                 description="Optional: seconds the run may take; the model search gets 60%, "
                                             "or what the steps before it left."),
            "horizon": Param(None, type=["null", "string"],
                             description="Optional: how far ahead a forecast looks, e.g. '12 months', '30 days', or a "
                                         "count of rows."),
            "columns": Param({}, type="object", additionalProperties={"type": "string"},
                             description="Optional: what each column holds (column -> description), read beside the "
                                         "data's own dictionary (DATA.columns.yaml, Parquet field metadata)."),
            "interactive": Param(False, type="boolean",
                                 description="Let a person choose among the top 3 microservices per stage (task "
                                             "'choose') before the pipeline is built."),
        },
    ) as dag:

        @task(task_id="plan")
        def plan(params: dict | None = None, ti=None, dag_run=None) -> list[int]:
            """Whose pipeline this is, the data's profile and the goal's reading; for a clear goal that nobody is to
            choose services for, the pipelines built as well (returned, for ``execute``): planned in one task, the
            run reaches its pipelines without a scheduler's round per agent. Else none, and what the later tasks
            read as XComs of their own: the question and its readings, or the intents to recommend for."""
            built_for, settings = owner_for(params, dag_run), Settings.from_env()
            try:
                given = GivenFields.from_conf(params)
                profiled = profile_dataset(run_dataset(params["dataset"], settings), descriptions=params.get("columns"))
            except InputError as exc:
                raise _user_error(exc) from None
            shown = _keep_profile(profiled, settings, dag_run)
            try:
                outcome = goal_questions.clear(_read(params, built_for, given, profiled))
            except AmbiguousGoal as question:
                if not question.candidates or api_login(dag_run.triggering_user_name) is None:
                    raise _user_error(question) from None  # nobody logged in to answer (a run made in-process)
                outcome = goal_questions.asked(question)  # for a person to answer (clarify)
            intents = [] if params["interactive"] else [Intent.model_validate(i)
                                                        for i in outcome[goal_questions.INTENTS_KEY]]
            chosen = _choices(intents, None, params)
            pipelines = _build(profiled, [(intent, _recommend(profiled, intent, built_for, params), choices)
                                          for intent, choices in zip(intents, chosen, strict=True)], built_for, params)
            for key, value in {**outcome, OWNER_KEY: built_for, PROFILE_KEY: shown}.items():
                ti.xcom_push(key=key, value=value)
            return pipelines

        @task(task_id="ask")
        def ask(ti=None) -> list[list[str]]:
            """The options of the question plan asks, if any (``clarify`` is mapped over them: Airflow maps over a
            task's return value only); skipped when plan built the pipelines, and with it everything after."""
            if ti.xcom_pull(task_ids="plan"):
                raise AirflowSkipException("the plan task built the pipelines")
            return ti.xcom_pull(task_ids="plan", key=goal_questions.OPTIONS_KEY)

        clarify = HITLOperator.partial(
            task_id="clarify",
            subject="What should this build do? {{ params.goal }}",
            body="{{ ti.xcom_pull(task_ids='plan', key='question') }}",  # rendered once: the goal stays text
            params=goal_questions.ENTRY,
            response_timeout=goal_questions.QUESTION_TIMEOUT,
        )

        @task(task_id="understood", trigger_rule="none_failed_min_one_success")
        def understood_step(params: dict | None = None, ti=None, dag_run=None) -> list[dict]:
            read = ti.xcom_pull(task_ids="plan", key=goal_questions.INTENTS_KEY)
            if read:  # the goal was clear: nothing was asked, services are to be chosen
                return read
            answer = ti.xcom_pull(task_ids="clarify", map_indexes=0) or {}
            candidates = ti.xcom_pull(task_ids="plan", key=goal_questions.CANDIDATES_KEY)
            chosen = goal_questions.answer_fields(answer, candidates).model_dump(exclude_defaults=True)
            return _read(params, _owner_of(ti), GivenFields.from_conf(params).model_copy(update=chosen),
                         _kept_profile(Settings.from_env(), dag_run), answered=True)

        @task(task_id="recommend")
        def recommend(intent_json: dict, params: dict | None = None, ti=None, dag_run=None) -> dict:
            planned = Intent.model_validate(intent_json)
            result = _recommend(_kept_profile(Settings.from_env(), dag_run), planned, _owner_of(ti), params)
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
        def build_step(intents: list[dict], ranked: list[dict], params: dict | None = None, ti=None,
                       dag_run=None) -> list[int]:
            """Every target's pipeline, built and stored together as ``plan`` builds them: a target whose pipeline
            cannot be built leaves none of the others stored."""
            answer = ti.xcom_pull(task_ids="choose") or {}  # nothing when the run is not interactive
            planned = [Intent.model_validate(intent) for intent in intents]
            chosen = _choices(planned, (answer.get("params_input") or {}).get("choices"), params)
            return _build(_kept_profile(Settings.from_env(), dag_run),
                          [(intent, Recommendation.model_validate(result), choices)
                           for intent, result, choices in zip(planned, ranked, chosen, strict=True)],
                          _owner_of(ti), params)

        pipelines = plan()
        _execute("execute", pipelines)  # a clear goal, planned in one task
        # one intent per pipeline: the map every later task is expanded over
        understood = understood_step()
        asked = ask()
        pipelines >> asked >> clarify.expand(options=asked) >> understood  # clarify skipped when nothing is asked
        asked >> understood  # with clarify skipped, ask's success is what lets understood run (interactive choice)
        ranked = recommend.expand(intent_json=understood)
        pipeline_ids = build_step(understood, ranked)
        branch = ask_or_build()
        ranked >> branch >> [choose, pipeline_ids]
        choose >> pipeline_ids
        _execute("execute_built", pipeline_ids)  # after a question or a choice
    return dag
