"""Which reasoner made an agent's decision, and at what cost: shown by `dagsmith plan --json` and kept with runs."""

from __future__ import annotations

from pydantic import BaseModel, Field

DETERMINISTIC = "deterministic"


class Provenance(BaseModel):
    reasoner: str = Field(DETERMINISTIC, description="'deterministic', or the language model that answered")
    latency_ms: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = Field(False, description="the model's answer came from the response cache")
    fallback_reason: str | None = Field(
        None, description="why a configured model's answer was not used and the deterministic reasoner decided")
