"""Parameter inference reviewed by a configured model (a scripted stand-in for a hosted one) while planning on the
real catalog: fitting changes are applied with their reasons; unknown, mistyped or check-failing ones are not."""

from __future__ import annotations

import dataclasses

import pytest

from dagsmith import datasets
from dagsmith.agents.planner import plan
from dagsmith.config import LLMConfig
from dagsmith.models.catalog import Stage
from tests.reasoning.chat_server import Reply, chat_server
from tests.reasoning.test_llm import GOOD_INTENT

MODEL = "scripted-model"


@pytest.fixture
def planned(catalog_settings, embedder, tmp_path, monkeypatch):
    """Plan 'predict churn' with the stand-in answering the intent, then ``changes`` for the parameters."""
    data = tmp_path / "churn.csv"
    datasets.load("wa_churn").to_csv(data, index=False)

    def run(changes: list[dict]):
        home = tmp_path / f"home-{len(list(tmp_path.glob('home-*')))}"  # its own answer cache: both questions asked
        with chat_server(Reply(GOOD_INTENT), Reply({"changes": changes})) as server:
            monkeypatch.setenv("OPENAI_BASE_URL", server.url)
            settings = dataclasses.replace(catalog_settings, home=home,
                                           llm=LLMConfig(reasoner="openai", model=MODEL, max_retries=0))
            result = plan(data, "predict churn", settings=settings, embedder=embedder, save=False)
            home.mkdir(exist_ok=True)
        return result.pipeline, server
    return run


def _step(spec, stage: Stage):
    return next(s for s in spec.steps if s.stage is stage)


def test_fitting_changes_are_applied_with_the_models_reasons(planned):
    first, _ = planned([])
    splitting = _step(first, Stage.SPLITTING).position
    spec, server = planned([{"step": splitting, "name": "test_size", "value": 0.3, "reason": "more rows to test on"}])
    assert _step(spec, Stage.SPLITTING).params["test_size"] == 0.3
    assert _step(spec, Stage.SPLITTING).param_reasons["test_size"] == f"{MODEL}: more rows to test on"
    assert spec.param_provenance.reasoner == MODEL and spec.valid
    steps_block = server.prompt(-1).split('<data name="steps">', 1)[1]
    assert '"name": "test_size"' in steps_block and '"rules_set"' in steps_block


@pytest.mark.parametrize("change, because", [
    ({"name": "learning_rate_of_doom", "value": 0.1}, "is not a parameter"),
    ({"name": "test_size", "value": "a lot"}, "is not a float"),
    ({"name": "test_size", "value": 0.0001}, "fail the pipeline's checks"),
], ids=["unknown-parameter", "wrong-type", "fails-checks"])
def test_changes_that_do_not_fit_leave_the_rules_parameters(planned, change, because):
    rules, _ = planned([])
    splitting = _step(rules, Stage.SPLITTING)
    spec, _ = planned([{"step": splitting.position, "reason": "trust me", **change}])
    assert spec.param_provenance.reasoner == "deterministic" and because in spec.param_provenance.fallback_reason
    assert _step(spec, Stage.SPLITTING).params == splitting.params and spec.valid
