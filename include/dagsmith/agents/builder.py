"""Agent A4, the pipeline builder: picks a service per stage, infers its parameters, validates, stores.

Autonomous mode takes each stage's top candidate; a person's choices (interactive mode, ``agents.choices``)
override it. The pipeline is a DAG whose edges are data flow (``agents.wiring``); parameters come from the data
and the goal (``agents.parameters``), and four checks run before anything can execute (``agents.checks``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from dagsmith.agents.checks import validate
from dagsmith.agents.choices import choose, honour_model_request
from dagsmith.agents.compatibility import prepares_itself
from dagsmith.agents.model_search import plan_search
from dagsmith.agents.parameters import infer_params
from dagsmith.agents.parameters_llm import read_params
from dagsmith.agents.stages import STAGE_ORDER, ordered
from dagsmith.agents.wiring import left_to_model, wire
from dagsmith.catalog.knowledge import model_family
from dagsmith.catalog.repository import CatalogEntry
from dagsmith.models.catalog import Stage
from dagsmith.models.intent import ConstraintKind, Intent
from dagsmith.models.plan import PipelineSpec, PipelineStatus, PlannedStep, Recommendation
from dagsmith.models.profile import DatasetProfile
from dagsmith.models.reasoning import Provenance
from dagsmith.reasoning.llm import ModelReasoner, ReasonerFailed, decide
from dagsmith_kit.portfolio import Winner


def pipeline_name(goal: str) -> str:
    words = re.findall(r"[a-z0-9]+", goal.lower())[:8]
    return "-".join(words)[:80] or "pipeline"


def build(
    profile: DatasetProfile,
    intent: Intent,
    recommendation: Recommendation,
    catalog: dict[str, CatalogEntry],
    *,
    owner: str,
    dataset: str,
    choices: dict[Stage, str] | None = None,
    reasoner: ModelReasoner | None = None,
    search_seconds: float | None = None,
    winners: Sequence[Winner] = (),
) -> PipelineSpec:
    """The pipeline for this intent: chosen services, inferred parameters (reviewed by the configured model when
    there is one and its values hold up), the modelling step's search (``search_seconds`` overrides the budget
    sized to the data, a goal's own budget overrides both; ``winners``, configurations that won on other tables, start
    it), edges, and its four checks."""
    if Stage.MODELLING not in (choices or {}):
        recommendation = honour_model_request(recommendation, intent, catalog)
    chosen = choose(recommendation, choices or {})
    native = left_to_model(chosen, catalog) - set(choices or {})
    chosen = [item for item in chosen if item[0] not in native]
    order = {stage: i for i, stage in enumerate(STAGE_ORDER)}
    chosen.sort(key=lambda item: order[item[0]])
    depends = wire([stage for stage, *_ in chosen])
    steps = []
    for position, (stage, name, alternatives, by) in enumerate(chosen):
        entry = catalog[name]
        if stage is Stage.MODELLING and native:  # self-healing may only swap in models that read the raw columns
            alternatives = [a for a in alternatives if native <= prepares_itself(catalog[a].analysis.tags)]
        params, reasons = infer_params(stage, entry, profile, intent)
        search = plan_search(stage, recommendation.for_stage(stage), name, by, profile, intent, search_seconds,
                             lambda candidate, stage=stage: infer_params(stage, catalog[candidate], profile, intent)[0],
                             lambda candidate: native <= prepares_itself(catalog[candidate].analysis.tags), winners,
                             lambda candidate: model_family(catalog[candidate].analysis.algorithms))
        if search and intent.asks(ConstraintKind.MODEL):
            search.reason = f"the goal asks for {' or '.join(intent.asks(ConstraintKind.MODEL))}: {search.reason}"
        if search and native:
            search.reason += (f"; {' and '.join(s.value for s in ordered(native))} left to the models, which do it "
                              "themselves, so no step before them does it")
        steps.append(PlannedStep(
            position=position, stage=stage, microservice=name, params=params, param_reasons=reasons,
            depends_on=depends[position], expected_inputs=entry.analysis.inputs,
            expected_outputs=entry.analysis.outputs, alternatives=alternatives, chosen_by=by, search=search,
        ))
    spec = PipelineSpec(name=pipeline_name(intent.goal), goal=intent.goal, owner=owner,
                        task_type=intent.task_type, target=intent.target, dataset=dataset, steps=steps)
    spec.checks = validate(spec, profile, intent, catalog)

    def by_model(model: ModelReasoner) -> tuple[PipelineSpec, Provenance]:
        revised, provenance = read_params(model, spec, catalog, profile, intent)
        revised.checks = validate(revised, profile, intent, catalog)
        if spec.valid and not revised.valid:
            failed = "; ".join(c.detail for c in revised.checks if not c.passed)
            raise ReasonerFailed(f"{model.name}'s parameters fail the pipeline's checks: {failed}", provenance)
        return revised, provenance

    spec, provenance = decide(reasoner, by_model, lambda: spec)
    spec.param_provenance = provenance
    spec.status = PipelineStatus.READY if spec.valid else PipelineStatus.DRAFT
    return spec
