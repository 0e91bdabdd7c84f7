"""Refit the goal reader's calibration (``agents/intent/calibration.json``) on the goal set's dev part only.

Every dev goal is read as planning reads it, with and without its table's data dictionary, letting every reading go
ahead; each reading that went ahead is one observation: the evidence it rested on, and whether it was right. A
logistic regression maps the evidence to the chance of being right.

The rules were written while reading the dev part's misses, so a map judged on the rows it was fitted on is too sure
of itself on goals it has not seen. The regularisation and the threshold are therefore chosen on held-out
predictions: the dev tables are split into ``FOLDS`` groups, and each reading is scored by a map fitted without its
table (a table's goals, with and without the dictionary, stay together). The threshold is the lowest held-out
confidence from which the readings at or above it are right at least ``REQUIRED_RIGHT`` of the time, unless that asks
about more than ``MAX_ASKED`` of the dev goals (questions the rules raise anyway included): a reader that asks about
everything is no help either, so then it is the highest confidence that asks no more. The shipped map is fitted on all
of dev. The test part is never read here: it only scores the result (``python -m dagsmith.bench.goals``).

Run with ``python -m dagsmith.bench.calibrate`` (``make calibrate-goals``) whenever the rules change, and ship the map
only if ``tests/agents`` still passes: the goal set holds few goals about columns a table lacks, and a map that looks
better on it can let those guesses go ahead.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from pathlib import Path

from dagsmith.agents.intent.calibration import CALIBRATION_FILE, FEATURES, VERSION, Evidence
from dagsmith.bench.goals import ASK, LabelledGoal, _profile, load_part, read

#: The share of readings that go ahead that must be right, and the most goals that may be asked about.
REQUIRED_RIGHT = 0.97
MAX_ASKED = 0.25
#: The logistic regression's inverse regularisations tried, and the held-out folds (groups of tables) they are
#: judged on: a hundred-odd readings and a handful of misses support little.
REGULARISATIONS = (0.1, 0.3, 1.0, 3.0)
FOLDS = 5


@dataclass(frozen=True)
class Observation:
    """A dev goal's reading: its table, the evidence it rested on (None when the rules ask anyway), whether right."""

    table: str
    evidence: Evidence | None
    right: bool = False


def observations(goals: list[LabelledGoal], *, documented: bool) -> list[Observation]:
    """Per goal, the evidence of its reading (every reading may go ahead) and whether it was right."""
    from dagsmith.agents.intent.detect import read_with_evidence
    from dagsmith.embeddings import default_embedder

    found: list[Observation] = []
    for goal in goals:
        got = read(goal, documented=documented, proceed=0.0)
        if got.task_type == ASK:
            found.append(Observation(goal.dataset, None))
        else:
            evidence = read_with_evidence(goal.goal, _profile(goal.dataset, documented),
                                          embedder=default_embedder())[1]
            found.append(Observation(goal.dataset, evidence, got.pair == (goal.task_type, goal.target)))
    return found


def threshold(chance, right, asked_anyway: int, total: int) -> tuple[float, float]:
    """The lowest confidence from which what goes ahead is right ``REQUIRED_RIGHT`` of the time, unless that asks
    about more than ``MAX_ASKED`` of the goals, then the highest that asks no more; and the share it asks about."""
    levels = sorted(set(chance))
    asked = {t: (asked_anyway + (chance < t).sum()) / total for t in levels}
    sure = min((t for t in levels if right[chance >= t].mean() >= REQUIRED_RIGHT), default=1.0)
    proceed = sure if asked.get(sure, 1.0) <= MAX_ASKED else max(t for t in levels if asked[t] <= MAX_ASKED)
    return float(proceed), float(asked[proceed])


def fit(observed: list[Observation]) -> dict:
    """The calibration map's contents for these observations."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import log_loss
    from sklearn.model_selection import GroupKFold

    seen = [o for o in observed if o.evidence is not None]
    x = np.array([[o.evidence.features()[name] for name in FEATURES] for o in seen if o.evidence])
    y = np.array([o.right for o in seen])
    folds = list(GroupKFold(n_splits=FOLDS).split(x, y, [o.table for o in seen]))

    def held_out(c: float):
        chance = np.zeros(len(y))
        for train, held in folds:
            chance[held] = LogisticRegression(C=c).fit(x[train], y[train]).predict_proba(x[held])[:, 1]
        return chance

    regularisation = min(REGULARISATIONS, key=lambda c: log_loss(y, held_out(c)))
    chance = held_out(regularisation)
    proceed, asked = threshold(chance, y, len(observed) - len(seen), len(observed))
    model = LogisticRegression(C=regularisation).fit(x, y)
    return {"version": VERSION, "fitted_on": {"part": "dev", "goals": len(observed), "readings": len(y),
                                              "right": int(y.sum()), "regularisation": regularisation,
                                              "held_out_asked": round(asked, 3),
                                              "held_out_right_at_threshold": round(float(y[chance >= proceed].mean()),
                                                                                   3)},
            "weights": {name: round(float(w), 4) for name, w in zip(FEATURES, model.coef_[0], strict=True)},
            # the threshold rounded down as an intent's confidence is rounded
            "intercept": round(float(model.intercept_[0]), 4), "proceed": math.floor(proceed * 1e3) / 1e3}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=CALIBRATION_FILE)
    args = parser.parse_args()
    goals = load_part("dev")
    fitted = fit(observations(goals, documented=False) + observations(goals, documented=True))
    args.out.write_text(json.dumps(fitted, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(fitted, indent=1))


if __name__ == "__main__":
    main()
