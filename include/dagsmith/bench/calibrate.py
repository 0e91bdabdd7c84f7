"""Refit the goal reader's calibration (``agents/intent/calibration.json``) on the goal set's dev part only.

Every dev goal is read as planning reads it, with and without its table's data dictionary, letting every reading go
ahead; each reading that went ahead is one observation: the evidence it rested on, and whether it was right. A
logistic regression maps the evidence to the chance of being right. The threshold is the lowest confidence from which
the dev readings at or above it are right at least ``REQUIRED_RIGHT`` of the time, unless that asks about more than
``MAX_ASKED`` of the dev goals (questions the rules raise anyway included): a reader that asks about everything is no
help either, so then it is the highest confidence that asks no more. The test part is never read here: it only scores
the result (``python -m dagsmith.bench.goals``).

Run with ``python -m dagsmith.bench.calibrate`` (``make calibrate-goals``) whenever the rules change.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from dagsmith.agents.intent.calibration import CALIBRATION_FILE, FEATURES, VERSION, Evidence
from dagsmith.bench.goals import ASK, LabelledGoal, _profile, load_part, read

#: The share of readings that go ahead that must be right, and the most goals that may be asked about.
REQUIRED_RIGHT = 0.97
MAX_ASKED = 0.25
#: The logistic regression's inverse regularisation: a hundred-odd readings and a handful of misses support little.
REGULARISATION = 1.0


def observations(goals: list[LabelledGoal], *, documented: bool) -> list[tuple[Evidence, bool] | None]:
    """Per goal, the evidence of its reading (every reading may go ahead) and whether it was right; None for a goal
    the rules ask about anyway."""
    from dagsmith.agents.intent.detect import read_with_evidence

    found: list[tuple[Evidence, bool] | None] = []
    for goal in goals:
        got = read(goal, documented=documented, proceed=0.0)
        if got.task_type == ASK:
            found.append(None)
        else:
            evidence = read_with_evidence(goal.goal, _profile(goal.dataset, documented))[1]
            found.append((evidence, got.pair == (goal.task_type, goal.target)))
    return found


def fit(observed: list[tuple[Evidence, bool] | None]) -> dict:
    """The calibration map's contents for these observations."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    seen = [o for o in observed if o is not None]
    x = np.array([[evidence.features()[name] for name in FEATURES] for evidence, _ in seen])
    y = np.array([right for _, right in seen])
    model = LogisticRegression(C=REGULARISATION).fit(x, y)
    chance = model.predict_proba(x)[:, 1]
    levels = sorted(set(chance))
    asked = {t: (len(observed) - len(seen) + (chance < t).sum()) / len(observed) for t in levels}
    sure = min((t for t in levels if y[chance >= t].mean() >= REQUIRED_RIGHT), default=1.0)
    proceed = sure if asked.get(sure, 1.0) <= MAX_ASKED else max(t for t in levels if asked[t] <= MAX_ASKED)
    return {"version": VERSION, "fitted_on": {"part": "dev", "goals": len(observed), "readings": len(y),
                                              "right": int(y.sum()), "asked": round(float(asked[proceed]), 3),
                                              "right_at_threshold": round(float(y[chance >= proceed].mean()), 3)},
            "weights": {name: round(float(w), 4) for name, w in zip(FEATURES, model.coef_[0], strict=True)},
            # the threshold rounded down as an intent's confidence is rounded
            "intercept": round(float(model.intercept_[0]), 4), "proceed": math.floor(float(proceed) * 1e3) / 1e3}


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
