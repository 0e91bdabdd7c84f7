"""Refit the goal reader's calibration (``agents/intent/calibration.json``) and its column ranking
(``agents/intent/column_ranker.json``) on the goal set's dev part only.

The ranking map comes first (``fit_ranker``): for every dev goal that predicts a column, each column the goal could
predict is measured (``column_ranker.column_evidence``), and a conditional logit (a softmax over the table's columns)
is fitted to give the right column the highest chance, its L2 penalty chosen on held-out folds of tables.

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

from dagsmith.agents.intent.calibration import CALIBRATION_FILE, FEATURES, VERSION, Evidence, calibration, capped
from dagsmith.agents.intent.column_ranker import FEATURES as MEASUREMENTS
from dagsmith.agents.intent.column_ranker import RANKER_FILE, Ranker, column_evidence, ranker
from dagsmith.agents.intent.column_ranker import VERSION as RANKER_VERSION
from dagsmith.bench.goals import ASK, LabelledGoal, _profile, load_part, read

#: The share of readings that go ahead that must be right, and the most goals that may be asked about.
REQUIRED_RIGHT = 0.97
MAX_ASKED = 0.25
#: The logistic regression's inverse regularisations tried, and the held-out folds (groups of tables) they are
#: judged on: a hundred-odd readings and a handful of misses support little.
REGULARISATIONS = (0.1, 0.3, 1.0, 3.0)
FOLDS = 5
#: The L2 penalties tried for the target ranking map (per goal, on its weights).
RANKER_PENALTIES = (0.01, 0.03, 0.1, 0.3, 1.0)


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
    chance = np.array([capped(c, o.evidence) for c, o in zip(held_out(regularisation), seen, strict=True)])
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


@dataclass(frozen=True)
class Ranking:
    """A dev goal that predicts a column: its table, each column it could predict with its measurements, and the
    right one."""

    table: str
    evidence: dict[str, dict[str, float]]
    target: str


def rankings(goals: list[LabelledGoal], *, documented: bool) -> list[Ranking]:
    """The column measurements of every goal whose labelled target is among the columns it could predict."""
    from dagsmith.embeddings import default_embedder

    found = []
    for goal in goals:
        if goal.target is None:
            continue
        evidence = column_evidence(goal.goal, _profile(goal.dataset, documented), default_embedder())
        if goal.target in evidence and len(evidence) > 1:
            found.append(Ranking(goal.dataset, evidence, goal.target))
    return found


def _conditional_logit(rows: list[Ranking], penalty: float) -> dict[str, float]:
    """The weights that maximise the chance of each goal's right column against the table's others (a softmax per
    goal), with an L2 ``penalty``."""
    import numpy as np
    from scipy.optimize import minimize

    blocks = [(np.array([[r.evidence[c][f] for f in MEASUREMENTS] for c in r.evidence]),
               list(r.evidence).index(r.target)) for r in rows]

    def loss(w):
        total, grad = penalty * w @ w, 2 * penalty * w
        for x, right in blocks:
            s = x @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            total -= np.log(p[right])
            grad -= x[right] - p @ x
        return total / len(blocks), grad / len(blocks)

    w = minimize(loss, np.zeros(len(MEASUREMENTS)), jac=True, method="L-BFGS-B").x
    return {name: round(float(v), 4) for name, v in zip(MEASUREMENTS, w, strict=True)}


def fit_ranker(rows: list[Ranking]) -> dict:
    """The ranking map for these goals, its L2 penalty chosen by the held-out chance of the right column (folds of
    tables, as for the calibration)."""
    from sklearn.model_selection import GroupKFold

    folds = list(GroupKFold(n_splits=FOLDS).split(rows, groups=[r.table for r in rows]))

    def held_out(penalty: float) -> tuple[float, float]:
        nll = right = 0.0
        for train, held in folds:
            ranked = Ranker(_conditional_logit([rows[i] for i in train], penalty))
            for i in held:
                chances = ranked.chances(rows[i].evidence)
                nll -= math.log(max(chances[rows[i].target], 1e-9))
                right += next(iter(chances)) == rows[i].target
        return nll / len(rows), right / len(rows)

    scored = {penalty: held_out(penalty) for penalty in RANKER_PENALTIES}
    penalty = min(scored, key=lambda p: scored[p][0])
    return {"version": RANKER_VERSION,
            "fitted_on": {"part": "dev", "goals": len(rows), "penalty": penalty,
                          "held_out_first_right": round(scored[penalty][1], 3)},
            "weights": _conditional_logit(rows, penalty)}


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    goals = load_part("dev")
    # the ranking map first: the readings the calibration learns from weigh their target's chance by it
    ranking = fit_ranker(rankings(goals, documented=False) + rankings(goals, documented=True))
    RANKER_FILE.write_text(json.dumps(ranking, indent=1) + "\n", encoding="utf-8")
    ranker.cache_clear()
    print(json.dumps(ranking, indent=1))
    # readings do not depend on the map, but reading needs one: a neutral one stands in while they are observed
    CALIBRATION_FILE.write_text(json.dumps({"version": VERSION, "weights": {}, "intercept": 0.0, "proceed": 0.0}),
                                encoding="utf-8")
    calibration.cache_clear()
    fitted = fit(observations(goals, documented=False) + observations(goals, documented=True))
    CALIBRATION_FILE.write_text(json.dumps(fitted, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(fitted, indent=1))


if __name__ == "__main__":
    main()
