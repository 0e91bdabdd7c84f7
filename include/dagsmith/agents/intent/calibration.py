"""How sure a reading of the rules is, as the chance that it is right: a logistic map from the evidence the rules
weigh (how strongly the goal's words ask for the task and how far ahead of another task, how surely the target was
found and whether the goal names it outright, whether another column is named as surely) and from evidence the words
alone do not give (how far ahead of the other columns the target is in meaning, whether the goal's words ask for the
kind of answer the target's values give) to a probability, fitted on the goal set's dev part.

A confidence that is the chance of being right is what a threshold can be set on: a reading below ``proceed`` is
asked about, not planned. The map and the threshold live in ``calibration.json``, refitted by ``make
calibrate-goals`` (``dagsmith.bench.calibrate``) whenever the rules change; the goal set's test part never shapes it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

CALIBRATION_FILE = Path(__file__).resolve().with_name("calibration.json")
#: The version of the map's format (and of the evidence it reads): a map of another version is refused.
VERSION = 2
#: Family totals above this say nothing more: a goal repeating "predict" is no surer for it.
MAX_TASK_WEIGHT = 4.0
#: A mention scoring this names its column outright (its name as written, or designated as the target).
NAMED_OUTRIGHT = 0.95
#: Leads in meaning beyond this (either way) say nothing more: the phrase naming a column is as close as it gets.
MAX_LEAD = 0.25


@dataclass(frozen=True)
class Evidence:
    """What a reading of the rules rests on."""

    supervised: bool  # the reading predicts a column
    task_words: float  # weight of the words asking for the task (a named column to predict counts 0.5)
    task_margin: float  # how far that is ahead of the next task the words ask for
    target: float  # how surely the target was found (the mention's score; 1.0 with nothing to predict)
    rival: bool  # another column, not among the inputs, is named at least as surely as the target
    lead: float = 0.0  # how much closer in meaning to the goal's words the target is than any other column
    mismatch: bool = False  # the goal's words ask for an amount and the target holds classes, or the other way round

    def features(self) -> dict[str, float]:
        return {"supervised": float(self.supervised),
                "task_words": min(self.task_words, MAX_TASK_WEIGHT) / MAX_TASK_WEIGHT,
                "task_margin": min(self.task_margin, MAX_TASK_WEIGHT) / MAX_TASK_WEIGHT,
                "target": self.target, "rival": float(self.rival),
                "named": float(self.supervised and self.target >= NAMED_OUTRIGHT),
                "lead": max(-MAX_LEAD, min(self.lead, MAX_LEAD)) / MAX_LEAD, "mismatch": float(self.mismatch)}


FEATURES = tuple(Evidence(False, 0.0, 0.0, 0.0, False).features())


@dataclass(frozen=True)
class Calibration:
    """The fitted map: a weight per feature and an intercept; and the chance of being right a reading needs to go
    ahead without a question."""

    weights: dict[str, float]
    intercept: float
    proceed: float

    def chance_right(self, evidence: Evidence) -> float:
        features = evidence.features()
        logit = self.intercept + sum(weight * features[name] for name, weight in self.weights.items())
        return 1 / (1 + math.exp(-logit))


def load(path: Path = CALIBRATION_FILE) -> Calibration:
    stored = json.loads(path.read_text(encoding="utf-8"))
    if stored.get("version") != VERSION or not set(stored["weights"]) <= set(FEATURES):
        raise ValueError(f"{path} holds a calibration of another version or other features; refit it with "
                         f"`make calibrate-goals`")
    return Calibration(stored["weights"], stored["intercept"], stored["proceed"])


@cache
def calibration() -> Calibration:
    """The shipped map, read once."""
    return load()


def chance_right(evidence: Evidence) -> float:
    """The calibrated confidence of a reading resting on ``evidence``."""
    return calibration().chance_right(evidence)
