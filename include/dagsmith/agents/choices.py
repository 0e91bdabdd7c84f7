"""A person's choices of services (interactive mode): the ``[TARGET:] STAGE=MICROSERVICE`` lines of the CLI and the
Airflow form, and how they, or a model the goal asks for, narrow each stage's ranking to the service a step runs."""

from __future__ import annotations

import re
from collections.abc import Collection

from dagsmith.agents.intent.model_mentions import covers
from dagsmith.catalog.repository import CatalogEntry
from dagsmith.errors import InputError
from dagsmith.models.catalog import Stage
from dagsmith.models.intent import ConstraintKind, Intent
from dagsmith.models.plan import TOP_CANDIDATES, Recommendation


class ChoiceError(InputError, ValueError):
    """A person's choice names a service that is not a candidate for that stage."""


#: A choice, aimed at one target's pipeline when several are built ("rooms: modelling=random_forest_regressor").
_CHOICE = re.compile(r"(?:(?P<target>.*):)?\s*(?P<stage>[^:=]*)=(?P<service>.*)")


def _choice(line: str) -> tuple[str | None, Stage, str]:
    """One choice line as (the target it aims at or None, stage, microservice); not a choice is a ``ChoiceError``."""
    found = _CHOICE.fullmatch(line)
    try:
        stage = Stage(found["stage"].strip()) if found else None
    except ValueError:
        stage = None
    if stage is None:
        raise ChoiceError(f"a choice is [TARGET:] STAGE=MICROSERVICE with a stage among "
                          f"{', '.join(s.value for s in Stage)}; got '{line}'")
    return (found["target"].strip() if found["target"] is not None else None), stage, found["service"].strip()


def check_choices(lines: list[str]) -> None:
    """Raise ``ChoiceError`` for the first line that is not a choice: what can be checked before the goal's targets
    are known."""
    for line in (line.strip() for line in lines):
        if line:
            _choice(line)


def parse_choices(lines: list[str], target: str | None = None, targets: Collection[str] = ()) -> dict[Stage, str]:
    """``STAGE=MICROSERVICE`` lines (blank ones ignored), as people write them in the CLI or the Airflow form.
    ``TARGET: STAGE=MICROSERVICE`` chooses for that target's pipeline only: the choices for ``target``'s are the plain
    lines and those aimed at it. A line may aim at one of the goal's ``targets`` built one pipeline each, or at the
    one ``target`` there is; aiming at any other column is an error naming the planned ones."""
    targets = list(targets) or ([target] if target else [])
    choices = {}
    for line in (line.strip() for line in lines):
        if not line:
            continue
        aimed, stage, service = _choice(line)
        if aimed is not None and aimed not in targets:
            planned = (f"the pipelines built predict {', '.join(targets)}" if len(targets) > 1 else
                       f"the pipeline built predicts {targets[0]}" if targets else
                       "the pipeline built predicts no column")
            raise ChoiceError(f"'{line}' chooses for the pipeline predicting '{aimed}', but {planned}")
        if aimed in (None, target):
            choices[stage] = service
    return choices


def choose(recommendation: Recommendation, choices: dict[Stage, str]) -> list[tuple[Stage, str, list[str], str]]:
    planned = [stage.stage for stage in recommendation.stages]
    unknown = [stage.value for stage in choices if stage not in planned]
    if unknown:
        raise ChoiceError(f"this plan has no {' or '.join(unknown)} stage to choose for; its stages are "
                          f"{', '.join(stage.value for stage in planned)}")
    chosen = []
    for stage_rec in recommendation.stages:
        names = [c.microservice for c in stage_rec.candidates]
        if not names:
            continue
        pick, by = names[0], "recommender"
        if stage_rec.stage in choices:
            pick, by = choices[stage_rec.stage], "user"
            if pick not in names:
                raise ChoiceError(f"'{pick}' is not a candidate for {stage_rec.stage.value}; "
                                  f"choose one of {', '.join(names[:TOP_CANDIDATES])}")
        chosen.append((stage_rec.stage, pick, [n for n in names if n != pick], by))
    return chosen


def honour_model_request(recommendation: Recommendation, intent: Intent,
                          catalog: dict[str, CatalogEntry]) -> Recommendation:
    """The ranking with only the models the goal asks for at the modelling stage, in their order; a request no
    catalog model meets is refused, naming the closest ones."""
    labels = intent.asks(ConstraintKind.MODEL)
    if not labels:
        return recommendation
    asked = " or ".join(labels)
    ranking = recommendation.for_stage(Stage.MODELLING)
    if ranking is None:
        raise ChoiceError(f"the goal asks for {asked}, a model that predicts a column, but it reads as "
                          f"{intent.task_type.value.replace('_', ' ')}, which fits no such model; name the column to "
                          f"predict, or leave the model out")
    kept = [c for c in ranking.candidates
            if any(covers(label, catalog[c.microservice].analysis.algorithms) for label in labels)]
    if not kept:
        closest = ", ".join(c.microservice for c in ranking.top) or "none"
        raise ChoiceError(f"the goal asks for {asked}, but no model of that kind in the catalog fits "
                          f"{intent.task_type.value.replace('_', ' ')}; the closest are {closest}. Upload one "
                          f"(dagsmith catalog add) or leave the model out of the goal")
    stages = [s.model_copy(update={"candidates": kept}) if s.stage is Stage.MODELLING else s
              for s in recommendation.stages]
    return recommendation.model_copy(update={"stages": stages})
