"""Building from the UI: a dataset and a goal, the plan to review (intent with reasons, top 3 per stage with
their score breakdown), optional changes of choice, then a meta-DAG run triggered as the person.

The plan shown is agents A1-A3 on the spot; the meta-DAG run then profiles, reads and ranks again and builds
with the person's choices, so the stored pipeline is the one Airflow's run made, with its logs.

Datasets are uploaded into ``DAGSMITH_HOME/datasets/uploads/<user>/`` or named by a path under one of the data
roots (``dagsmith.data.roots``): a page must not become a way to read any file the server can.
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Form, HTTPException, Request, UploadFile, status
from fastapi.responses import Response
from pydantic import Field
from starlette.concurrency import run_in_threadpool

from dagsmith.agents.intent.given import KNOWN_METRICS
from dagsmith.agents.planner import read_intents, recommend_stages
from dagsmith.agents.profiler import profile_dataset
from dagsmith.agents.intent.understanding import MAX_GOAL_CHARS
from dagsmith.config import Settings
from dagsmith.data.roots import DatasetRefused, confine, data_roots
from dagsmith.errors import UserFacingError
from dagsmith.models.catalog import Stage, TaskType
from dagsmith.models.intent import GivenFields, SeveralTargets
from dagsmith.ui.access import BuilderDep, Viewer
from dagsmith.ui.airflow_api import run_url, trigger_meta_dag
from dagsmith.ui.pages import page, settings_of

router = APIRouter()
SettingsDep = Annotated[Settings, Depends(settings_of)]
#: Largest dataset the form accepts; larger ones are put in a data root and named by path.
MAX_UPLOAD_BYTES = 200 * 1024 * 1024
CHUNK = 1024 * 1024
#: How the page asks for one pipeline per target, told when a goal names several targets without asking for it.
EACH_TARGET_HINT = "Or tick 'One pipeline per target' (each_target in the API) to build one pipeline per target."


def resolve_dataset(settings: Settings, given: str) -> Path:
    """A dataset path (or file:// URI) the data-roots policy allows, or a 422 that says where datasets may live."""
    if not given.strip():
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, "upload a dataset or give its path")
    try:
        return confine(given, settings)
    except DatasetRefused as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from None


async def save_dataset(settings: Settings, viewer: Viewer, file: UploadFile) -> Path:
    """Stream an uploaded dataset into the user's upload folder, refusing it past ``MAX_UPLOAD_BYTES``."""
    name = re.sub(r"[^\w.-]", "_", Path(file.filename or "dataset").name).lstrip(".") or "dataset"
    user = re.sub(r"[^\w.-]", "_", viewer.name)
    folder = settings.home / "datasets" / "uploads" / user / secrets.token_hex(6)
    folder.mkdir(parents=True)
    target, written = folder / name, 0
    with open(target, "wb") as out:
        while chunk := await file.read(CHUNK):
            written += len(chunk)
            if written > MAX_UPLOAD_BYTES:
                out.close()
                target.unlink()
                folder.rmdir()
                raise HTTPException(status.HTTP_413_CONTENT_TOO_LARGE,
                                    f"the dataset is over {MAX_UPLOAD_BYTES // CHUNK} MB; put it in a data folder "
                                    "and give its path instead")
            out.write(chunk)
    if not written:
        target.unlink()
        folder.rmdir()
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"the uploaded file {name} is empty")
    return target


class BuildFields(GivenFields):
    """What the build form and ``/api/plan`` take besides the goal: the fields that win over its words (the meta-DAG's
    params of the same names) and what each column holds (its ``columns`` param)."""

    columns: dict[str, str] = Field(default_factory=dict, description="column -> what it holds, over the data's own "
                                                                       "dictionary")

    @property
    def given(self) -> GivenFields:
        return GivenFields.model_validate(self.model_dump(include=set(GivenFields.model_fields)))

    def conf(self) -> dict[str, Any]:
        """The meta-DAG params these fields set."""
        return self.model_dump(mode="json", exclude_defaults=True)


def plan_preview(settings: Settings, viewer: Viewer, dataset: Path, goal: str, each_target: bool = False,
                 fields: BuildFields | None = None) -> dict[str, Any]:
    """Agents A1-A3 for the review page: what was understood (as the person chose before for these words, and as the
    ``fields`` say), and the top 3 per stage; with several targets built one pipeline each, those of each pipeline
    (``plans``)."""
    fields = fields or BuildFields()
    try:
        profile = profile_dataset(dataset, descriptions=fields.columns)
        intents = read_intents(goal, profile, user=viewer.name, given=fields.given, each_target=each_target,
                               settings=settings)
        plans = [{"intent": intent.model_dump(mode="json"),
                  "recommendation": recommend_stages(profile, intent, user=viewer.name,
                                                     settings=settings).model_dump(mode="json")}
                 for intent in intents]
    except SeveralTargets as exc:
        raise HTTPException(exc.http_status, f"{exc} {EACH_TARGET_HINT}") from None
    except UserFacingError as exc:
        raise HTTPException(exc.http_status, str(exc)) from None
    return {"dataset": str(dataset), "goal": goal, "each_target": each_target, "fields": fields.conf(),
            "profile": {"n_rows": profile.n_rows, "n_columns": profile.n_columns, "format": profile.format,
                        "quality": profile.quality.model_dump(mode="json")},
            **(plans[0] if len(plans) == 1 else {"plans": plans})}  # one plan keeps the shape callers read


def trigger(viewer: Viewer, dataset: Path, goal: str, choices: list[str], shared: bool, each_target: bool,
            fields: BuildFields | None = None) -> dict[str, str]:
    """The meta-DAG run for this plan, as ``viewer``, with their choices (``STAGE=MICROSERVICE`` lines, or
    ``TARGET: STAGE=MICROSERVICE`` for one target's pipeline; the meta-DAG checks them) and ``fields``."""
    conf = {"dataset": str(dataset), "goal": goal, "shared": shared, "each_target": each_target,
            "choices": "\n".join(choices),  # the pipeline is the triggering login's: Airflow records who that is
            **(fields or BuildFields()).conf()}
    try:
        run_id = trigger_meta_dag(viewer.build_dag, conf, viewer.token)
    except UserFacingError as exc:
        raise HTTPException(exc.http_status, str(exc)) from None
    return {"dag_run_id": run_id, "dag_id": viewer.build_dag, "url": run_url(viewer.build_dag, run_id)}


class PlanRequest(BuildFields):
    dataset: str = Field(description="path (or file:// URI) under a data root, e.g. one /api/datasets returned")
    goal: str = Field(max_length=MAX_GOAL_CHARS, description="may be empty when target (or a task that predicts "
                                                             "nothing) says what to do")
    each_target: bool = Field(False, description="one pipeline per target when the goal names several")

    @property
    def fields(self) -> BuildFields:
        return BuildFields.model_validate(self.model_dump(include=set(BuildFields.model_fields)))


class RunRequest(PlanRequest):
    choices: dict[Stage, str] = Field(default_factory=dict, description="stage -> microservice, among its top 3")
    target_choices: dict[str, dict[Stage, str]] = Field(
        default_factory=dict, description="with one pipeline per target: target -> stage -> microservice, for that "
                                          "target's pipeline only")
    shared: bool = False


@router.post("/api/datasets", status_code=status.HTTP_201_CREATED)
async def api_dataset(viewer: BuilderDep, settings: SettingsDep, file: Annotated[UploadFile, File()]) -> dict:
    return {"dataset": str(await save_dataset(settings, viewer, file))}


def _goal(body: PlanRequest) -> str:
    """The request's goal, or one in words for what its fields settle; a request saying neither is refused."""
    if not body.goal.strip() and not body.settles:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, "give a goal, or a target (or a task that "
                                                                   "predicts nothing)")
    return body.goal_for(body.goal)


@router.post("/api/plan")
def api_plan(body: PlanRequest, viewer: BuilderDep, settings: SettingsDep) -> dict:
    return plan_preview(settings, viewer, resolve_dataset(settings, body.dataset), _goal(body), body.each_target,
                        body.fields)


@router.post("/api/runs", status_code=status.HTTP_201_CREATED)
def api_trigger(body: RunRequest, viewer: BuilderDep, settings: SettingsDep) -> dict:
    dataset = resolve_dataset(settings, body.dataset)
    lines = [f"{stage.value}={name}" for stage, name in body.choices.items()]
    lines += [f"{target}: {stage.value}={name}" for target, chosen in body.target_choices.items()
              for stage, name in chosen.items()]
    return trigger(viewer, dataset, _goal(body), lines, body.shared, body.each_target, body.fields)


@router.get("/build")
def build_page(request: Request, viewer: BuilderDep, settings: SettingsDep) -> Response:
    return page(request, "build.html", viewer=viewer, roots=data_roots(settings),
                task_types=[t.value for t in TaskType], metrics=KNOWN_METRICS)


def form_fields(target: str, task: str, metric: str, exclude: str, time_budget: str, horizon: str,
                columns: str) -> BuildFields:
    """The build form's optional fields: empty ones state nothing; columns to leave out are separated by commas, and
    each line of ``columns`` is ``column: what it holds``."""
    described = {}
    for number, line in enumerate(columns.splitlines(), 1):
        if line.strip():
            name, colon, text = line.partition(":")
            if not colon or not name.strip() or not text.strip():
                raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT,
                                    f"column descriptions, line {number}: write 'column: what it holds'")
            described[name.strip()] = " ".join(text.split())
    try:
        return BuildFields(target=target.strip() or None, task=TaskType(task) if task else None,
                           metric=metric or None, exclude=[c.strip() for c in exclude.split(",") if c.strip()],
                           time_budget=int(time_budget) if time_budget.strip() else None,
                           horizon=horizon.strip() or None, columns=described)
    except ValueError as exc:  # an unknown task, a budget that is no whole number of seconds, an unread horizon
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"the fields cannot be used: {exc}") from None


@router.post("/build/plan")
async def plan_page(request: Request, viewer: BuilderDep, settings: SettingsDep, goal: Annotated[str, Form()] = "",
                    dataset_path: Annotated[str, Form()] = "", each_target: Annotated[bool, Form()] = False,
                    dataset_file: Annotated[UploadFile | None, File()] = None, target: Annotated[str, Form()] = "",
                    task: Annotated[str, Form()] = "", metric: Annotated[str, Form()] = "",
                    exclude: Annotated[str, Form()] = "", time_budget: Annotated[str, Form()] = "",
                    horizon: Annotated[str, Form()] = "", columns: Annotated[str, Form()] = "") -> Response:
    fields = form_fields(target, task, metric, exclude, time_budget, horizon, columns)
    if not goal.strip() and not fields.settles:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, "say what you want, e.g. \"predict churn\", or "
                                                                   "give the column to predict")
    if dataset_file is not None and dataset_file.filename:
        dataset = await save_dataset(settings, viewer, dataset_file)
    else:
        dataset = resolve_dataset(settings, dataset_path)
    plan = await run_in_threadpool(plan_preview, settings, viewer, dataset, fields.given.goal_for(goal),
                                   each_target, fields)
    return page(request, "plan.html", viewer=viewer, plan=plan)


@router.post("/build/run")
async def run_page(request: Request, viewer: BuilderDep, settings: SettingsDep) -> Response:
    form = await request.form()
    dataset = resolve_dataset(settings, str(form.get("dataset", "")))
    # choice_STAGE, or choice_TARGET:STAGE for one target's pipeline
    choices = [f"{key.removeprefix('choice_')}={value}" for key, value in form.items()
               if key.startswith("choice_") and value]
    try:
        fields = BuildFields.model_validate_json(str(form.get("fields") or "{}"))
    except ValueError:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT,
                            "the plan's fields were changed; plan again") from None
    # Off the event loop: the trigger is a request to this same api-server.
    triggered = await run_in_threadpool(trigger, viewer, dataset, str(form.get("goal", "")), choices,
                                        form.get("shared") == "on", form.get("each_target") == "on", fields)
    return page(request, "triggered.html", viewer=viewer, run=triggered, goal=form.get("goal", ""))
