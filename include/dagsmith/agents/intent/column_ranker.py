"""Which column a goal asks to predict, as a learned ranking: each column's evidence weighed together, each column's
chance of being the target.

The rules choose a target by a fixed order of evidence (how well a mention matches first, then nearness to a task
verb, ...), so a weak clue that is wrong can outrank several agreeing ones. Here every predictable column gets the
same few measurements (how surely and where the goal names it outside its inputs, whether it is named among the
inputs, how close in meaning it is to the goal's words and how far ahead of the others, whether the profile would
pick it, whether its values give the kind of answer the words ask for), and a conditional logit map, fitted on the
goal set's dev part (``make calibrate-goals``), scores them. A softmax over the table's columns is what it is fitted
by; the reader uses each column's chance against its ``RIVALS`` strongest others (on a table of ten thousand columns
a softmax over all of them would spread the chance of the one the goal names thin). It says which column a
prediction is of, not whether the goal asks for one (the rules and the calibration weigh that). It reads values,
types and meaning, no words of its own: the map holds a weight per measurement and nothing else.

The reader uses the chance of its target as evidence for its confidence, and a question offers columns in this
order.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from dagsmith.agents.intent.column_meaning import closest_in_meaning
from dagsmith.agents.intent.column_requests import ruled_columns
from dagsmith.agents.intent.columns import predictable
from dagsmith.agents.intent.mentions import column_lists, column_matches
from dagsmith.agents.intent.reading import Goal, read_goal
from dagsmith.agents.intent.target import noun_phrase_distance, verb_positions
from dagsmith.agents.intent.task import asks_other_kind, supervised_task
from dagsmith.embeddings import Embedder
from dagsmith.models.profile import DatasetProfile

RANKER_FILE = Path(__file__).resolve().with_name("column_ranker.json")
#: The version of the map's format and measurements: a map of another version is refused.
VERSION = 1
#: The strongest other columns a column's chance is weighed against (the goal set's tables have 11 columns in the
#: median; the weakest of a wide table's columns would only spread the chance thin).
RIVALS = 20
#: Words between a task verb and the noun phrase of a mention beyond which the distance says nothing more.
MAX_DISTANCE = 10
FEATURES = ("named", "among_inputs", "mentions", "verb_distance", "after_verb", "position", "meaning",
            "meaning_lead", "closest_in_meaning", "profile_rank", "profile_score", "other_kind")


def column_evidence(goal: str, profile: DatasetProfile, embedder: Embedder | None) -> dict[str, dict[str, float]]:
    """Each column the goal could ask to predict (predictable, not ruled in or out as a feature) and its
    measurements, by name. Without ``embedder`` no column is close in meaning."""
    read = read_goal(goal, profile)
    matches = column_matches(read, profile)
    listed = {at for span in column_lists(matches, read) for at in span}
    verbs = verb_positions(read)
    ruled = ruled_columns(goal, profile)
    # a column ruled in or out as a feature is no rival in meaning; one no model could predict still draws the words
    meaning = {m.column: m.similarity for m in closest_in_meaning(goal, profile, embedder)
               if m.column not in ruled} if embedder else {}
    candidates = {c.column: (rank, c.score) for rank, c in enumerate(profile.target_candidates)}
    found: dict[str, dict[str, float]] = {}
    for column in profile.columns:
        if not predictable(column) or column.name in ruled:
            continue
        mine = [m for m in matches if m.column == column.name]
        outside = [m for m in mine if not read.among_inputs(m.start) and m.start not in listed]
        best = max(outside, key=lambda m: m.score, default=None)
        others = [value for name, value in meaning.items() if name != column.name]
        close = meaning.get(column.name, 0.0)
        rank, score = candidates.get(column.name, (None, 0.0))
        found[column.name] = {
            "named": best.score if best else 0.0,
            "among_inputs": max((m.score for m in mine if m not in outside), default=0.0),
            "mentions": float(len({m.start for m in outside})),
            "verb_distance": _verb_distance(read, best, verbs) if best else 1.0,
            "after_verb": float(bool(best) and any(best.start > v for v in verbs)),
            "position": min((m.start for m in outside), default=len(read.words)) / max(len(read.words), 1),
            "meaning": close,
            "meaning_lead": close - max(others, default=close),
            "closest_in_meaning": float(bool(meaning) and close >= max(meaning.values())),
            "profile_rank": 0.0 if rank is None else 1 / (1 + rank),
            "profile_score": score,
            "other_kind": float(asks_other_kind(read, supervised_task(read, column, profile)[0])),
        }
    return found


def _verb_distance(read: Goal, best, verbs: list[int]) -> float:
    if not verbs:
        return 1.0
    return min(noun_phrase_distance(best, read.stems, verbs), MAX_DISTANCE) / MAX_DISTANCE


@dataclass(frozen=True)
class Ranker:
    """The fitted map: a weight per measurement (no intercept: only differences between a table's columns count)."""

    weights: dict[str, float]

    def scores(self, evidence: dict[str, dict[str, float]]) -> dict[str, float]:
        """Each column's score, highest first."""
        scores = {name: sum(self.weights[f] * values[f] for f in FEATURES) for name, values in evidence.items()}
        return dict(sorted(scores.items(), key=lambda item: -item[1]))

    def chances(self, evidence: dict[str, dict[str, float]]) -> dict[str, float]:
        """Each column's chance of being the target, highest first: the softmax over the table's columns the map is
        fitted by."""
        scores = self.scores(evidence)
        top = max(scores.values(), default=0.0)
        total = sum(math.exp(s - top) for s in scores.values())
        return {name: math.exp(s - top) / total for name, s in scores.items()}

    def against_rivals(self, evidence: dict[str, dict[str, float]]) -> dict[str, float]:
        """Each column's chance of being the target against the ``RIVALS`` strongest other columns, highest first: the
        softmax the map is fitted by, which a wide table's many columns the goal does not mention do not dilute."""
        scores = self.scores(evidence)
        strongest = list(scores.values())[: RIVALS + 1]
        top = strongest[0] if strongest else 0.0
        total = sum(math.exp(s - top) for s in strongest)
        return {name: math.exp(score - top) / (total + (math.exp(score - top) if i > RIVALS else 0.0))
                for i, (name, score) in enumerate(scores.items())}


def load(path: Path = RANKER_FILE) -> Ranker:
    stored = json.loads(path.read_text(encoding="utf-8"))
    if stored.get("version") != VERSION or set(stored["weights"]) != set(FEATURES):
        raise ValueError(f"{path} holds a ranking map of another version or other measurements; refit it with "
                         f"`make calibrate-goals`")
    return Ranker(stored["weights"])


@cache
def ranker() -> Ranker:
    """The shipped map, read once."""
    return load()


def target_chances(goal: str, profile: DatasetProfile, embedder: Embedder | None) -> dict[str, float]:
    """Each column's chance of being what ``goal`` asks to predict rather than its strongest rival, by the shipped
    map, likeliest first."""
    return ranker().against_rivals(column_evidence(goal, profile, embedder))
