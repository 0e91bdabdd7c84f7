"""The four checks a pipeline passes before anything can execute: every required stage has a service, each step's
input is produced upstream, referenced columns exist (and no step drops the target), and the table is big enough."""

from __future__ import annotations

from dataclasses import replace

from dagsmith.agents.compatibility import Gap, data_state, shortfalls
from dagsmith.agents.wiring import ancestors, done_by_model
from dagsmith.catalog.repository import CatalogEntry
from dagsmith.models.catalog import Stage
from dagsmith.models.intent import Intent
from dagsmith.models.plan import PipelineSpec, ValidationCheck
from dagsmith.models.profile import DatasetProfile

MIN_ROWS = {True: 20, False: 10}  # supervised or not
MIN_TEST_ROWS = 5


def validate(spec: PipelineSpec, profile: DatasetProfile, intent: Intent,
             catalog: dict[str, CatalogEntry]) -> list[ValidationCheck]:
    """The pipeline's four checks, each passed or not with what a person reads about it."""
    depends = {s.position: s.depends_on for s in spec.steps}
    stage_of = {s.position: s.stage for s in spec.steps}
    present = {s.stage for s in spec.steps} | done_by_model(spec, catalog)
    missing = [s.value for s in intent.required_stages if s not in present]
    checks = [ValidationCheck(
        name="required stages", passed=not missing,
        detail="every required stage has a microservice" if not missing
        else f"no compatible microservice for: {', '.join(missing)}")]

    problems, size_problems = [], []
    data = data_state(profile, intent)
    for step in spec.steps:
        upstream = {stage_of[p] for p in ancestors(step.position, depends)}
        for shortfall in shortfalls(catalog[step.microservice].analysis.tags, replace(data, before=upstream)):
            if shortfall.blocking:
                (size_problems if shortfall.gap is Gap.ROWS else problems).append(
                    f"{step.microservice} {shortfall.reason}")
        if step.stage is Stage.LOADING and step.depends_on:
            problems.append(f"{step.microservice} reads the raw file and must come first")
    checks.append(ValidationCheck(name="formats along edges", passed=not problems,
                                  detail="; ".join(problems) or "each step's input is produced upstream"))

    columns = set(profile.column_names)
    bad = [f"{s.microservice}.{k}='{v}'" for s in spec.steps for k, v in s.params.items()
           if k in {"time_column", "target"} and v not in columns]
    if intent.target and intent.target not in columns:
        bad.append(f"target '{intent.target}'")
    dropped = [s.microservice for s in spec.steps if intent.target and intent.target in (s.params.get("columns") or [])]
    checks.append(ValidationCheck(
        name="columns and target", passed=not bad and not dropped,
        detail="referenced columns exist and no step removes the target" if not bad and not dropped
        else "; ".join([f"unknown column {b}" for b in bad] + [f"{d} would drop the target" for d in dropped])))

    supervised = intent.task_type.supervised
    if profile.n_rows < MIN_ROWS[supervised]:
        size_problems.insert(0, f"{profile.n_rows} rows, at least {MIN_ROWS[supervised]} needed")
    for step in spec.steps:
        test_size = step.params.get("test_size")
        if test_size and profile.n_rows * test_size < MIN_TEST_ROWS:
            size_problems.append(f"a {test_size:.0%} test set would hold under {MIN_TEST_ROWS} rows")
    checks.append(ValidationCheck(name="dataset size", passed=not size_problems,
                                  detail="; ".join(size_problems) or f"{profile.n_rows:,} rows are enough"))
    return checks
