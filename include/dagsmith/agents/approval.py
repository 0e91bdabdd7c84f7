"""The form a person approves a plan in: the top candidates per stage, each with its score and the reason to audit."""

from __future__ import annotations

from dagsmith.models.plan import Recommendation


def top_choices_markdown(recommendation: Recommendation, target: str | None = None) -> str:
    """The top 3 per stage as a person chooses among them: name, score and the reason to audit; under a heading
    naming the ``target`` when the goal's targets are built one pipeline each."""
    lines = [f"### Pipeline predicting {target} (choose as `{target}: STAGE=MICROSERVICE`)", ""] if target else []
    for stage in recommendation.stages:
        lines.append(f"**{stage.stage.value}**")
        lines += stage.top_lines()
        lines.append("")
    return "\n".join(lines)
