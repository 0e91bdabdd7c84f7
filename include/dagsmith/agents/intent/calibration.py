"""How sure a reading of the rules is, as the chance that it is right: a logistic map from the evidence the rules
weigh (how strongly the goal's words ask for the task and how far ahead of another task, how surely the target was
found and whether the goal names it outright, whether another column is named as surely) and from evidence the rules
do not weigh (the target's chance by the learned column ranking, which reads meaning, the profile and the target's
values, and whether the goal's words ask for the kind of answer the target's values give) to a probability, fitted
on the goal set's dev part.

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
VERSION = 3
#: Family totals above this say nothing more: a goal repeating "predict" is no surer for it.
MAX_TASK_WEIGHT = 4.0
#: A mention scoring this names its column outright (its name as written, or designated as the target).
NAMED_OUTRIGHT = 0.95
#: The most a reading whose target's values give another kind of answer than the goal's words ask for can be: the
#: goal set holds too few such readings to weigh, and each is a sign that the target is not the column meant (a "how
#: much" answered by a yes/no column), so it is asked about whatever the fitted map says.
MISMATCHED = 0.5


@dataclass(frozen=True)
class Evidence:
    """What a reading of the rules rests on."""

    supervised: bool  # the reading predicts a column
    task_words: float  # weight of the words asking for the task (a named column to predict counts 0.5)
    task_margin: float  # how far that is ahead of the next task the words ask for
    target: float  # how surely the target was found (the mention's score; 1.0 with nothing to predict)
    rival: bool  # another column, not among the inputs, is named at least as surely as the target
    mismatch: bool = False  # the goal's words ask for an amount and the target holds classes, or the other way round
    ranked: float = 1.0  # the target's chance by the column ranking (``column_ranker``); 1.0 with nothing to predict

    def features(self) -> dict[str, float]:
        return {"supervised": float(self.supervised),
                "task_words": min(self.task_words, MAX_TASK_WEIGHT) / MAX_TASK_WEIGHT,
                "task_margin": min(self.task_margin, MAX_TASK_WEIGHT) / MAX_TASK_WEIGHT,
                "target": self.target, "rival": float(self.rival),
                "named": float(self.supervised and self.target >= NAMED_OUTRIGHT),
                "mismatch": float(self.mismatch),
                "ranked": self.ranked}


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
        return capped(1 / (1 + math.exp(-logit)), evidence)


def capped(chance: float, evidence: Evidence) -> float:
    """The chance, at most ``MISMATCHED`` for a reading whose target gives another kind of answer than the words ask
    for."""
    return min(chance, MISMATCHED) if evidence.mismatch else chance


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
