"""A language model's reading of a failed step, when one is configured: what went wrong, and whether to run the
same service again or which untried candidate to run instead.

The model sees the step's stage, the failed service, the tail of its error output and each untried candidate's
summary and input requirements (all as delimited data). Its choice must be one of those candidates, or the
deterministic rules decide (``healing.policy``).
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, Field

from dagsmith.healing.classify import ErrorClass
from dagsmith.models.catalog import Analysis
from dagsmith.models.execution import TryAction
from dagsmith.models.reasoning import Provenance
from dagsmith.reasoning.llm import ModelReasoner, ReasonerFailed

#: The end of the error output the model reads: where the exception and the service's own message are.
ERROR_TAIL_CHARS = 3000

QUESTION = (
    "A step of a machine-learning pipeline failed. Read its error output and classify the error. Then decide: "
    "'retry' runs the same microservice again (only for passing errors such as a lost connection), 'substitute' "
    "runs one of the untried candidates instead: pick the one most likely to succeed on this data given the error, "
    "by its exact name. Give a short reason a person can audit.")


class FailureReading(BaseModel):
    """What the model answers: the contract its JSON must fit."""

    error_class: ErrorClass
    action: Literal[TryAction.RETRY, TryAction.SUBSTITUTE]
    substitute: str | None = Field(description="exact name of an untried candidate when substituting, else null")
    reason: str


def interpret(reasoner: ModelReasoner, stage: str, failed: str, error_text: str,
              untried: dict[str, Analysis]) -> tuple[FailureReading, Provenance]:
    """The model's reading; raises ``ReasonerFailed`` when it picks something that is not an untried candidate."""
    candidates = "\n".join(json.dumps({"name": name, "does": analysis.summary,
                                       "requires": analysis.requirements_on_input[:5]})
                           for name, analysis in untried.items())
    reading, provenance = reasoner.ask(
        "failure", QUESTION, {"stage": stage, "failed_service": failed, "error_output": error_text[-ERROR_TAIL_CHARS:],
                              "untried_candidates": candidates}, FailureReading)
    if reading.action == TryAction.SUBSTITUTE and reading.substitute not in untried:
        raise ReasonerFailed(f"{reasoner.name} chose '{reading.substitute}', which is not an untried candidate "
                             f"({', '.join(untried)})", provenance)
    return reading, provenance
