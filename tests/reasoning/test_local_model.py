"""Opt-in: the model reasoner against a real local OpenAI-compatible server (llama.cpp serving a 270M model),
run by `make test-llm`. The model is small and often wrong; what is tested is the protocol: its answers arrive
in the schema (grammar-constrained JSON), wrong ones are caught by the sense checks, and every decision stands."""

from __future__ import annotations

import os

import pytest

from dagsmith.agents.intent.understanding import understand
from dagsmith.catalog.analysis.code import analyze_code
from dagsmith.catalog.analysis.code_llm import read_code
from dagsmith.config import Settings
from dagsmith.healing.interpret import interpret
from dagsmith.models.catalog import Stage
from dagsmith.reasoning.llm import ReasonerFailed, model_reasoner
from tests.catalog.test_code_llm import _source
from tests.reasoning.test_llm import churn

CONFIGURED = os.environ.get("DAGSMITH_REASONER") == "openai" and bool(os.environ.get("OPENAI_BASE_URL"))
pytestmark = pytest.mark.skipif(not CONFIGURED,
                                reason="opt-in: `make test-llm` runs it against a local llama.cpp server")
#: What a sense check says; a form failure ("does not fit its schema", "empty answer") would be a protocol defect.
SENSE_FAILURES = ("not a column", "without a target", "cannot be planned", "not an untried candidate",
                  "evidence only for", "left the summary")


@pytest.fixture
def reasoner(tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSMITH_HOME", str(tmp_path))
    return model_reasoner(Settings.from_env())


def _form_ok(reason: str | None) -> bool:
    return reason is None or any(s in reason for s in SENSE_FAILURES)


def test_the_local_model_reads_an_intent_or_is_caught(reasoner):
    intent = understand("predict which customers will churn", churn(), reasoner)
    made = intent.provenance
    assert made.prompt_tokens > 0 and made.latency_ms > 0, made  # the server was really asked
    assert _form_ok(made.fallback_reason), made.fallback_reason
    assert intent.target in churn().column_names and Stage.MODELLING in intent.required_stages


def test_the_local_model_reads_a_failure_or_is_caught(reasoner):
    untried = {name: analyze_code(_source(name)) for name in ("random_forest_classifier", "logistic_regression")}
    try:
        reading, made = interpret(reasoner, "modelling", "svm_classifier",
                                  "ValueError: Input X contains NaN.\nSVC does not accept missing values", untried)
    except ReasonerFailed as failed:
        assert _form_ok(str(failed)), str(failed)
    else:
        assert made.completion_tokens > 0 and (reading.action == "retry" or reading.substitute in untried)


def test_the_local_model_words_a_code_analysis_or_is_caught(reasoner):
    source = _source("random_forest_classifier")
    static = analyze_code(source)
    try:
        analysis, made = read_code(reasoner, source, static)
    except ReasonerFailed as failed:
        assert _form_ok(str(failed)), str(failed)
    else:
        assert analysis.summary and analysis.stages[0] in static.stages and made.completion_tokens > 0
