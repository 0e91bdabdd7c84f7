"""Agent A4's parameter inference by the configured model: one question for the whole pipeline.

The model sees each step's parameters as the code reads them (name, type, default), what the rules chose, the
goal and the columns, and may change values, with a reason for each. Every value must be a parameter the
service's code reads, of its type and finite; the pipeline with the model's values must pass the same checks
as before. Otherwise the rules' parameters stand.
"""

from __future__ import annotations

import json
import math

from pydantic import BaseModel

from dagsmith.agents.intent.understanding import columns_summary
from dagsmith.catalog.repository import CatalogEntry
from dagsmith.models.catalog import Parameter
from dagsmith.models.intent import Intent
from dagsmith.models.plan import PipelineSpec
from dagsmith.models.profile import DatasetProfile
from dagsmith.models.reasoning import Provenance
from dagsmith.reasoning.llm import ModelReasoner, ReasonerFailed

QUESTION = (
    "A machine-learning pipeline was built for the user's goal; its steps' parameters were set by rules. Review "
    "them for this data and goal. List only the parameters you would change (none is a fine answer), each by its "
    "step number, its exact name among that step's parameters, the new value (a number, a boolean or a string) "
    "and a short reason a person can audit.")
#: Parameter descriptions are cut to this length in the prompt.
DESCRIPTION_CHARS = 160


class ParamChange(BaseModel):
    step: int
    name: str
    value: str | float | bool
    reason: str


class ParamReading(BaseModel):
    """What the model answers: the contract its JSON must fit."""

    changes: list[ParamChange]


def _kind(parameter: Parameter) -> str:
    """The parameter's type as the code shows it: declared, else that of its default."""
    if parameter.type in {"int", "float", "bool", "str"}:
        return parameter.type
    return {bool: "bool", int: "int", float: "float", str: "str"}.get(type(parameter.default), "any")


def _typed(parameter: Parameter, value: str | float | bool):
    """``value`` as the parameter's type, or None when it is not one."""
    kind = _kind(parameter)
    if kind == "bool":
        return value if isinstance(value, bool) else None
    if isinstance(value, bool):
        return None
    if kind in {"int", "float"}:
        if not isinstance(value, int | float) or not math.isfinite(value):
            return None
        if kind == "int":
            return int(value) if float(value).is_integer() else None
        return float(value)
    if kind == "str":
        return value if isinstance(value, str) and value.strip() else None
    return value


def _steps_text(spec: PipelineSpec, catalog: dict[str, CatalogEntry]) -> str:
    return "\n".join(json.dumps({
        "step": step.position, "stage": step.stage.value, "service": step.microservice,
        "parameters": [{"name": p.name, "type": _kind(p), "default": p.default,
                        "description": p.description[:DESCRIPTION_CHARS]}
                       for p in catalog[step.microservice].analysis.parameters],
        "rules_set": step.params}, default=str) for step in spec.steps)


def read_params(reasoner: ModelReasoner, spec: PipelineSpec, catalog: dict[str, CatalogEntry],
                profile: DatasetProfile, intent: Intent) -> tuple[PipelineSpec, Provenance]:
    """The pipeline with the model's parameter changes; raises ``ReasonerFailed`` when one does not fit."""
    reading, provenance = reasoner.ask("parameters", QUESTION, {
        "goal": intent.goal, "task": f"{intent.task_type.value}, target {intent.target}, {profile.n_rows} rows",
        "columns": columns_summary(profile), "steps": _steps_text(spec, catalog)}, ParamReading)
    steps = {step.position: step.model_copy(deep=True) for step in spec.steps}
    problems = []
    for change in reading.changes:
        step = steps.get(change.step)
        parameter = step and next((p for p in catalog[step.microservice].analysis.parameters
                                   if p.name == change.name), None)
        value = _typed(parameter, change.value) if parameter else None
        if step is None:
            problems.append(f"there is no step {change.step}")
        elif parameter is None:
            problems.append(f"'{change.name}' is not a parameter {step.microservice}'s code reads")
        elif value is None:
            problems.append(f"{step.microservice}.{change.name}={change.value!r} is not a {_kind(parameter)}")
        else:
            step.params[change.name] = value
            step.param_reasons[change.name] = f"{reasoner.name}: {change.reason}"
    if problems:
        raise ReasonerFailed(f"{reasoner.name}'s parameters do not fit: " + "; ".join(problems[:3]), provenance)
    return spec.model_copy(update={"steps": [steps[p] for p in sorted(steps)]}), provenance
