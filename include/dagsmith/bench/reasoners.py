"""Benchmark: the configured model reasoner against the deterministic one, on the suite's goals.

Run with ``python -m dagsmith.bench.reasoners`` under a configured model, e.g. through the local llama.cpp
server: ``scripts/local-llm.sh .venv/bin/python -m dagsmith.bench.reasoners``. For every task the goal is read
twice on the same profile: by the rules alone and by the model with its fallback, as planning does. Reported:
task type and target right, how often the model's answer was used or fell back (and why), latency and tokens.
Intent is where the reasoners differ most: the suite's remaining failures are all readings of the goal.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import Counter
from pathlib import Path

from dagsmith.agents.profiler import profile_frame
from dagsmith.agents.intent.understanding import understand
from dagsmith.bench.suite import BenchTask, load_suite
from dagsmith.config import Settings
from dagsmith.models.intent import Intent, Question
from dagsmith.reasoning.llm import ModelReasoner, model_reasoner


def _right(intent: Intent | None, task: BenchTask) -> bool:
    return intent is not None and intent.task_type == task.task_type and (
        (intent.target or "").lower() == (task.target or "").lower())


def _read(task: BenchTask, profile, reasoner: ModelReasoner | None) -> Intent | None:
    try:
        return understand(task.goal, profile, reasoner)
    except Question:
        return None


def _fallback_kind(reason: str) -> str:
    """The fallback reason without its specifics (names, numbers), to count kinds."""
    for kind in ("does not fit its schema", "not a column", "without a target", "cannot be planned", "did not answer",
                 "rate-limited", "refused", "cannot reach", "empty answer"):
        if kind in reason:
            return kind
    return reason[:60]


def run(tasks: list[BenchTask], reasoner: ModelReasoner) -> dict:
    rows = []
    for index, task in enumerate(tasks, 1):
        frame, _ = task.frame_and_labels()
        profile = profile_frame(frame, source=task.dataset)
        rules = _read(task, profile, None)
        model = _read(task, profile, reasoner)
        made = model.provenance if model else None
        rows.append({"task": task.id, "rules_right": _right(rules, task), "model_right": _right(model, task),
                     "used_model": bool(made and made.reasoner != "deterministic"),
                     "fallback": made.fallback_reason if made else "the goal could not be planned",
                     "latency_ms": made.latency_ms if made else 0.0,
                     "tokens": (made.prompt_tokens + made.completion_tokens) if made else 0})
        print(f"{index}/{len(tasks)} {task.id}: rules {'ok' if rows[-1]['rules_right'] else 'wrong'}, with model "
              f"{'ok' if rows[-1]['model_right'] else 'wrong'}"
              f"{'' if rows[-1]['used_model'] else ' (fell back: ' + str(rows[-1]['fallback'])[:80] + ')'}",
              file=sys.stderr)
    used = [r for r in rows if r["used_model"]]
    latencies = [r["latency_ms"] for r in rows if r["latency_ms"]]
    return {
        "model": reasoner.name, "tasks": len(rows),
        "right_deterministic": sum(r["rules_right"] for r in rows),
        "right_with_model": sum(r["model_right"] for r in rows),
        "model_answers_used": len(used),
        "model_answers_used_and_right": sum(r["model_right"] for r in used),
        "fallbacks": dict(Counter(_fallback_kind(r["fallback"]) for r in rows
                                  if not r["used_model"] and r["fallback"])),
        "median_latency_ms": statistics.median(latencies) if latencies else None,
        "mean_tokens": statistics.mean(r["tokens"] for r in rows) if rows else 0,
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, help="only the first N tasks of the suite")
    parser.add_argument("--out", type=Path, help="also write the result as JSON here")
    args = parser.parse_args()
    reasoner = model_reasoner(Settings.from_env())
    if reasoner is None:
        parser.error("no model is configured: set DAGSMITH_REASONER=openai and DAGSMITH_LLM_MODEL (docs/llm.md)")
    result = run(load_suite()[: args.limit], reasoner)
    if args.out:
        args.out.write_text(json.dumps(result, indent=2))
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}, indent=2))


if __name__ == "__main__":
    main()
