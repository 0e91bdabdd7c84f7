"""Pipeline spec files: what the DAG factory reads to generate a pipeline's DAG without touching the database.

A spec is written from the pipeline's rows (the single source of truth) whenever the pipeline is built or
changed; it is never edited by hand.
"""

from __future__ import annotations

import re
from pathlib import Path

from sqlalchemy import select

from dagsmith.config import Settings
from dagsmith.models.plan import DagSpec, DagStep, PipelineStatus, Recommendation
from dagsmith.store import schema
from dagsmith.store.db import session_scope, stored
from dagsmith.store.pipelines import service_names, steps_of
from dagsmith_kit.files import write_whole

SPEC_SUFFIX = ".pipeline.json"
DEFAULT_RETRY_DELAY_SECONDS = 5.0
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&])")


_DAG_ID_PREFIX = "dagsmith_pipeline_"
_SCORE_DAG_ID_PREFIX = "dagsmith_score_"


def dag_id(pipeline_id: int) -> str:
    return f"{_DAG_ID_PREFIX}{pipeline_id}"


def score_dag_id(pipeline_id: int) -> str:
    """The DAG that scores new rows with the pipeline's model (``airflow.scoring_dag``)."""
    return f"{_SCORE_DAG_ID_PREFIX}{pipeline_id}"


def pipeline_id_of(dag_id_: str) -> int | None:
    """The pipeline a DAG id names (its own DAG or its scoring DAG), or None for any other DAG."""
    for prefix in (_DAG_ID_PREFIX, _SCORE_DAG_ID_PREFIX):
        number = dag_id_.removeprefix(prefix)
        if number != dag_id_ and number.isdecimal():
            return int(number)
    return None


def specs_dir(settings: Settings) -> Path:
    return settings.home / "pipelines"


def spec_file(folder: Path, pipeline_id: int) -> Path:
    """Where a pipeline's spec lives: named by its id, so a parse finds one pipeline's spec without reading others."""
    return folder / f"{pipeline_id}{SPEC_SUFFIX}"


def spec_ids(folder: Path) -> list[int]:
    """The pipelines with a spec file in ``folder``, by id (a file of any other name is no spec)."""
    names = (path.name.removesuffix(SPEC_SUFFIX) for path in folder.glob(f"*{SPEC_SUFFIX}"))
    return sorted(int(name) for name in names if name.isdecimal())


def write_spec(pipeline_id: int, settings: Settings, *, retry_delay_seconds: float | None = None) -> Path:
    """Write the spec file the DAG factory reads, from the pipeline's rows (the single source of truth), with the
    latest run's answer on top of its docs. Without ``retry_delay_seconds`` the spec keeps the delay it has."""
    path = spec_file(specs_dir(settings), pipeline_id)
    if retry_delay_seconds is None:
        retry_delay_seconds = read_spec(path).retry_delay_seconds if path.is_file() else DEFAULT_RETRY_DELAY_SECONDS
    with session_scope(settings) as session:
        pipeline = stored(session, schema.Pipeline, pipeline_id)
        names = service_names(session)
        steps = [DagStep(position=s.position, stage=s.stage, microservice=names[s.microservice_id],
                         depends_on=s.depends_on, alternatives=len(s.alternatives), search=s.search or None)
                 for s in steps_of(session, pipeline_id)]
        latest = session.scalar(select(schema.Execution).where(schema.Execution.pipeline_id == pipeline_id,
                                                               schema.Execution.status == PipelineStatus.COMPLETED)
                                .order_by(schema.Execution.id.desc()).limit(1))
        answer = latest.trace.get("answer") if latest else None
        latest_answer = f"**Latest answer** (run {latest.id}): {plain(answer)}\n\n" if latest and answer else ""
        spec = DagSpec(pipeline_id=pipeline.id, name=pipeline.name, goal=pipeline.goal, owner=pipeline.owner,
                       shared=pipeline.shared, dataset=pipeline.dataset, schedule=pipeline.schedule,
                       retry_delay_seconds=retry_delay_seconds, steps=steps,
                       explanation=latest_answer + explanation(pipeline, steps))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_whole(path, spec.model_dump_json(indent=2))  # reruns of one pipeline may write it together
    return path


def read_spec(path: Path) -> DagSpec:
    return DagSpec.model_validate_json(path.read_text(encoding="utf-8"))


def explanation(pipeline: schema.Pipeline, steps: list[DagStep]) -> str:
    """Markdown for the pipeline's DAG page: what was understood, and per step the choice among the top-ranked
    candidates with their scores and reasons, so a person can audit the pipeline from the Airflow UI."""
    intent = pipeline.plan.get("intent", {})
    reasons = intent.get("reasons", {})
    stored = pipeline.plan.get("recommendation")
    ranked = {stage.stage: stage for stage in Recommendation.model_validate(stored).stages} if stored else {}
    lines = [f"**{pipeline.name}** (owner {plain(pipeline.owner)}): {plain(pipeline.goal)}", "",
             f"- task: {pipeline.task_type}" + (f" of {plain(pipeline.target)}" if pipeline.target else ""),
             *(f"- {field.replace('_', ' ')}: {plain(reasons[field])}" for field in ("task_type", "target")
               if field in reasons),
             ""]
    for step in steps:
        search, tried = step.search, ""
        if search:  # the models tried beside the pick, and why
            others = ", ".join(f"`{name}`" for name in search.candidates[1:])
            tried = (f", searched with {others}" if others else ", tuned") + f" ({plain(search.reason)})"
        lines.append(f"**{step.position}. {step.stage}**: `{step.microservice}`{tried}, among")
        stage = ranked.get(step.stage)
        lines += (stage.top_lines() if stage else []) or ["- (no ranking recorded)"]
        lines.append("")
    return "\n".join(lines)


def plain(text: str) -> str:
    """``text`` as markdown that shows it as written, on one line: a goal, a user or a column name cannot add
    headings, links, HTML or made-up steps to the page people audit the pipeline from."""
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", " ".join(text.split()))
