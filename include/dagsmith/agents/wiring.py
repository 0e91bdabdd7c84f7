"""A pipeline's graph: edges as data flow (a chain through the transforming stages, branches off its end), and the
preparation stages left out because the chosen models do them natively."""

from __future__ import annotations

from dagsmith.agents.compatibility import prepares_itself
from dagsmith.agents.stages import BRANCH_STAGES
from dagsmith.catalog.repository import CatalogEntry
from dagsmith.models.catalog import Stage
from dagsmith.models.plan import PipelineSpec


def left_to_model(chosen: list[tuple[Stage, str, list[str], str]], catalog: dict[str, CatalogEntry]) -> set[Stage]:
    """The preparation stages the modelling pick does itself, so the chain leaves the columns raw for it."""
    pick = next((name for stage, name, *_ in chosen if stage is Stage.MODELLING), None)
    planned = {stage for stage, *_ in chosen}
    return prepares_itself(catalog[pick].analysis.tags) & planned if pick else set()


def done_by_model(spec: PipelineSpec, catalog: dict[str, CatalogEntry]) -> set[Stage]:
    """Stages no step runs because every model the modelling step may fit does them itself."""
    step = next((s for s in spec.steps if s.stage is Stage.MODELLING), None)
    if step is None:
        return set()
    models = step.search.candidates if step.search else [step.microservice]
    present = {s.stage for s in spec.steps}
    return set.intersection(*(prepares_itself(catalog[m].analysis.tags) for m in models)) - present


def wire(stages: list[Stage]) -> dict[int, list[int]]:
    """Edges as data flow: a chain through the transforming stages, branches off its end."""
    depends: dict[int, list[int]] = {}
    last_main: int | None = None
    position = {stage: i for i, stage in enumerate(stages)}
    for i, stage in enumerate(stages):
        if stage in BRANCH_STAGES and last_main is not None:
            parent = position.get(Stage.EVALUATION) if stage is Stage.REPORTING else None
            depends[i] = [parent if parent is not None else last_main]
        else:
            depends[i] = [last_main] if last_main is not None else []
            last_main = i
    return depends


def ancestors(position: int, depends: dict[int, list[int]]) -> set[int]:
    seen, todo = set(), list(depends.get(position, []))
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(depends.get(node, []))
    return seen
