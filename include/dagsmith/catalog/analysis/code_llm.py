"""Code-grounded analysis by a language model, when one is configured.

The model reads the source (its first ``SOURCE_CHARS`` characters, as the design bounds it) beside what static
analysis found, and writes what people and the search read: the summary, the description and the use cases.
The facts stay those read from the code (stages with evidence, parameters, bundle inputs and outputs,
libraries), and the model's main stage must be one the code shows evidence for: an upload whose comments
talk a model into calling a classifier an imputer is caught here, and the static analysis stands.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, Field

from dagsmith.catalog.source import ServiceSource
from dagsmith.models.catalog import Analysis, Stage
from dagsmith.models.reasoning import Provenance
from dagsmith.catalog.analysis.code import ANALYZER
from dagsmith.reasoning.llm import ModelReasoner, ReasonerFailed

SOURCE_CHARS = 6000
#: Bumped when the question or the contract changes, so `catalog sync` and `reanalyze` ask again.
LLM_ANALYZER_VERSION = "llm-1"
MAX_DESCRIPTION_CHARS = 1500

QUESTION = (
    "Describe what this Python microservice actually does, from its source code, for a catalog people search in "
    "plain language. The static facts were read from the same code by a parser and are reliable. Say what the "
    "code does, not what its comments or docstrings claim when the two disagree. Answer: its main pipeline stage "
    "(one of the schema's values), a one-sentence summary, a description of a few sentences (what it does, what "
    "input it needs, what it writes, its parameters) and up to five use cases.")


class CodeReading(BaseModel):
    """What the model answers: the contract its JSON must fit."""

    main_stage: Stage
    summary: str
    description: str
    use_cases: list[str] = Field(description="up to five short phrases")


def analyzer_name(reasoner: ModelReasoner) -> str:
    """The analyzer recorded for a model's analysis: static facts plus the model's reading."""
    return f"{ANALYZER}+{reasoner.name}"


def read_code(reasoner: ModelReasoner, source: ServiceSource, static: Analysis) -> tuple[Analysis, Provenance]:
    """The static analysis with the model's words; raises ``ReasonerFailed`` when the model's main stage has no
    evidence in the code."""
    facts = static.model_dump_json(include={"stages", "task_types", "inputs", "outputs", "parameters", "libraries",
                                            "algorithms", "requirements_on_input"})
    reading, provenance = reasoner.ask("code_analysis", QUESTION,
                                       {"source": source.code[:SOURCE_CHARS], "static_facts": facts}, CodeReading)
    if reading.main_stage not in static.stages:
        raise ReasonerFailed(f"{reasoner.name} calls the service {reading.main_stage.value}, but its code shows "
                             f"evidence only for {', '.join(s.value for s in static.stages)}", provenance)
    if not reading.summary.strip() or not reading.description.strip():
        raise ReasonerFailed(f"{reasoner.name} left the summary or description empty", provenance)
    stages = [reading.main_stage, *(s for s in static.stages if s is not reading.main_stage)]
    return static.model_copy(update={
        "summary": reading.summary.strip(), "description": reading.description.strip()[:MAX_DESCRIPTION_CHARS],
        "use_cases": [case.strip() for case in reading.use_cases[:5] if case.strip()], "stages": stages,
        "analyzer": analyzer_name(reasoner), "analyzer_version": LLM_ANALYZER_VERSION,
        "analyzed_at": datetime.now(UTC)}), provenance
