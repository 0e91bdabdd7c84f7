"""Which column to predict: a designated one, else the mention best placed after a task verb (inputs named after
"based on" aside), else a noun the goal names that no column matches, else the profile's best candidate; and the column
an exploration relates the others to. Two columns named equally well are a question back to the user; so are several
columns named as targets ("price and rooms"), which planning builds one pipeline each for when the goal asks so.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from dagsmith.agents.intent.columns import CLASS_TYPES, predictable
from dagsmith.agents.intent.lexicon import (
    BOTH_WORDS,
    CONJUNCTIONS,
    EACH_WORDS,
    GENERIC_NOUNS,
    JOINING_WORDS,
    MODEL_COUNTS,
    MODEL_NOUNS,
    PER_FILLER,
    PER_WHAT,
    PER_WORDS,
    QUANTITY_WORDS,
    SKIPPABLE,
    STOPWORDS,
    TASK_PHRASES,
    TASK_STEMS,
    VOCABULARY,
    Family,
    stems_of,
)
from dagsmith.agents.intent.mentions import MATCH_SCORE, STRONG_MATCH, Match, MatchKind, column_lists
from dagsmith.agents.intent.reading import Goal, find_phrase
from dagsmith.agents.intent.task import CLASSIFICATION_HINTS, supervised_type
from dagsmith.models.intent import AmbiguousGoal, Reading, SeveralTargets
from dagsmith.models.profile import ColumnProfile, DatasetProfile

#: Words after which an exploratory goal names the column the others are related to ("what drives weekly hours").
FOCUS_PHRASES = tuple(stems_of(phrase) for phrase in (
    "drives", "drive", "affects", "affect", "influences", "influence", "determines", "explains", "behind",
    "related to", "relates to", "associated with", "association with", "relationship with", "correlated with",
    "correlations with", "impact on", "effect on"))


@dataclass(frozen=True)
class TargetChoice:
    column: str | None
    confidence: float
    reason: str


def supervised_target(read: Goal, explicit: Match | None, absent: str | None, matches: list[Match],
                      profile: DatasetProfile) -> TargetChoice:
    """A designated column ("target is X") wins over one the goal mentions; a designated absent one is kept so
    validation can say it is missing."""
    if explicit:
        return TargetChoice(explicit.column, explicit.score, target_reason(explicit))
    if absent:
        return TargetChoice(absent, 0.3, f"the goal designates '{absent}' as the target, but no column matches it")
    return choose_target(read, matches, verb_positions(read), profile)


def listed_target(column: str, matches: list[Match]) -> TargetChoice:
    """One of the targets a goal lists, planned on its own: its best mention is the reason and the confidence."""
    best = max((m for m in matches if m.column == column), key=lambda m: m.score)
    return TargetChoice(column, best.score, target_reason(best))


def verb_positions(goal: Goal) -> list[int]:
    """Where the goal asks for a prediction: the target is usually the column named right after these words."""
    return sorted(at for family, phrase, _ in TASK_PHRASES if family is Family.SUPERVISED
                  for at in find_phrase(goal.stems, phrase))


def _chunk(stems: tuple[str, ...], at: int, end: int, verbs: list[int]) -> tuple[int, int]:
    """The run of content words around a mention ("credit card balance"): one noun phrase."""
    def inside(i: int) -> bool:
        return 0 <= i < len(stems) and stems[i] not in STOPWORDS and i not in verbs
    while inside(at - 1):
        at -= 1
    while inside(end):
        end += 1
    return at, end


def noun_phrase_distance(match: Match, stems: tuple[str, ...], verbs: list[int]) -> int:
    """Words from the nearest task verb to the noun phrase of ``match`` (a phrase before the verb costs 2 more); its
    position in the goal when there is no verb."""
    start, end = _chunk(stems, match.start, match.end, verbs)
    return min((start - v if start > v else v - end + 2 for v in verbs), default=start)


def qualifies(match: Match, target: Match, stems: tuple[str, ...]) -> bool:
    """Whether ``match`` only qualifies the target's mention: a word before it in its noun phrase ("*health*
    insurance", whose head is the last word), or the complement of "of" after it ("the continent of a *country*")."""
    start, _ = _chunk(stems, target.start, target.end, [])
    between = stems[target.end : match.start]
    return (start <= match.start and match.end <= target.start) or (
        bool(between) and between[0] == "of" and set(between) <= STOPWORDS)


def _rank_key(match: Match, stems: tuple[str, ...], verbs: list[int]) -> tuple[float, int, int]:
    """Best match first; then the noun phrase nearest after a task verb; then its head word."""
    return -match.score, noun_phrase_distance(match, stems, verbs), -match.end


def _linked(left: Match, right: Match, stems: tuple[str, ...]) -> bool:
    """Two mentions of one list: only "and"/"or", commas or quantity words between them ("price and the number of
    rooms", "price, rooms")."""
    return set(stems[left.end : right.start]) <= CONJUNCTIONS | QUANTITY_WORDS


def _listed_targets(first: Match, mentions: list[Match], stems: tuple[str, ...]) -> list[str]:
    """The columns named in one list with ``first`` ("price and rooms", "price, rooms and age"), in the goal's order:
    a run of strong mentions, each linked to the next, joined somewhere by "and"/"or"; just ``first`` otherwise."""
    run: list[Match] = []
    for m in sorted((m for m in mentions if m.score >= STRONG_MATCH), key=lambda m: (m.start, m != first)):
        if run and m.start < run[-1].end:
            continue  # another column read in the same words
        if run and _linked(run[-1], m, stems):
            run.append(m)
        elif first in run:
            break
        else:
            run = [m]
    joined = any(set(stems[a.end : b.start]) & JOINING_WORDS for a, b in pairwise(run))
    return [m.column for m in run] if first in run and joined else [first.column]


def choose_target(goal: Goal, matches: list[Match], verbs: list[int], profile: DatasetProfile) -> TargetChoice:
    """The column the goal names (nearest a task verb, inputs after "based on"/"from" aside), else the profile's.

    A column also named among the inputs ("... from its sales volume") is one the user predicts from, not the target;
    an identifier the goal's subject happens to name ("will the *customer* sign up ..." over `customer`), or a column
    named right after "each"/"every"/"per", is who the rows are, not what to predict, unless nothing else is named.
    A target the goal names but the table lacks is the one column there is to predict, or, when the goal's words ask
    for a class, the one named only for the classes (`type`, `class`, ...); else it stays absent for validation to
    report.
    """
    inputs = {m.column for m in matches if goal.among_inputs(m.start)}
    # Inputs listed after the target's own words ("visits - predict them from age and income") are never the target;
    # a goal that opens with its inputs ("from these readings, predict ...") names its target among them.
    zone = [m for m in matches if not goal.among_inputs(m.start)] or (matches if goal.features_from == 0 else [])
    zone = [m for m in zone if m.column not in inputs] or zone
    # "which method was used? model on age, sex, education and occupation": a list of columns names the inputs
    listed = {at for span in column_lists(matches, goal) for at in span}
    zone = [m for m in zone if m.start not in listed] or zone
    # "the arrival delay of each flight": the column right after "each", "every" or "per" is what the rows are
    zone = [m for m in zone if not (m.start and goal.stems[m.start - 1] in PER_WORDS)] or zone
    zone = [m for m in zone if predictable(profile.column(m.column))] or zone
    if zone:
        best = _named_target(goal, zone, verbs, profile)
        return TargetChoice(best.column, best.score, target_reason(best))
    named = named_but_absent(goal, verbs)
    if named:
        only = [c.name for c in profile.columns if c.name not in inputs and c.name != profile.time_column
                and predictable(c)]
        if len(only) == 1:  # words can name nothing else ("forecast the wine sales" over `time` and `value`)
            return TargetChoice(only[0], 0.6, f"the goal names '{named}' as what to predict; no column is called "
                                              f"that, and '{only[0]}' is the only column there is to predict")
        labels = [name for name in only if _names_a_label(profile.column(name))]
        # "screen for diabetes" over a yes/no column the table calls `type`; "predict the wingspan" names a column
        # that is not there, which no class column answers
        if len(labels) == 1 and set(goal.stems) & CLASSIFICATION_HINTS:
            return TargetChoice(labels[0], 0.55, f"the goal names '{named}' as what to predict; no column is called "
                                                 f"that, and '{labels[0]}' is the only column whose name says only "
                                                 f"that it holds the classes")
        return TargetChoice(named, 0.3, f"the goal names '{named}' as what to predict, but no column matches it")
    candidates = [c for c in profile.target_candidates if c.column not in inputs]
    if candidates:
        candidate = candidates[0]
        why = "; ".join(candidate.reasons[:2]) or f"score {candidate.score:.2f}"
        return TargetChoice(
            candidate.column, MATCH_SCORE[MatchKind.PROFILE] * (0.5 + candidate.confidence / 2),
            f"the goal names no column, so the profile's best target candidate is used ({why}); say which column "
            f"to predict to be sure",
        )
    return TargetChoice(None, 0.2, "the goal names no column and the profile found no target candidate")


def focus_column(goal: Goal, matches: list[Match]) -> Match | None:
    """The column an exploration relates the others to: the one named nearest after "drives", "related to", ...;
    else the only column the goal names outright ("explore price"). None when the goal names no single column."""
    after = [at + len(phrase) for phrase in FOCUS_PHRASES for at in find_phrase(goal.stems, phrase)]
    named = [m for m in matches if m.start >= min(after)] if after else []
    if named:
        return min(named, key=lambda m: _rank_key(m, goal.stems, after))
    strong = {m.column: m for m in matches if m.score >= STRONG_MATCH}
    return next(iter(strong.values())) if len(strong) == 1 else None


#: Column names that say a column holds the answer without saying what it is about: tables often call their classes so.
LABEL_NAMES = frozenset(("class", "classes", "label", "labels", "target", "outcome", "response", "result", "y", "yesno",
                         "type", "diagnosis"))
#: The most classes a column named so may hold to be taken for the answer.
MAX_LABEL_CLASSES = 20


def _names_a_label(column: ColumnProfile) -> bool:
    return (column.name.strip().lower() in LABEL_NAMES and column.semantic_type in CLASS_TYPES
            and 2 <= column.unique <= MAX_LABEL_CLASSES)


def _named_target(goal: Goal, zone: list[Match], verbs: list[int], profile: DatasetProfile) -> Match:
    """The best-placed mention; an exact tie goes to the profile's favourite, or back to the user as a question; so do
    several columns named as targets (``SeveralTargets``, with the goal's words asking for a model of each)."""
    favourite = profile.target_candidates[0].column if profile.target_candidates else None
    best: dict[str, Match] = {}
    for m in sorted(zone, key=lambda m: (_rank_key(m, goal.stems, verbs), m.column != favourite)):
        best.setdefault(m.column, m)
    first, *rivals = best.values()
    columns = _listed_targets(first, list(best.values()), goal.stems)
    if len(columns) > 1:
        named = ", ".join(f"'{c}'" for c in columns[:-1]) + f" and '{columns[-1]}'"
        raise SeveralTargets(
            f"The goal names {len(columns)} columns to predict: {named}. Which one should the model predict? One "
            f"pipeline predicts one column; for a model of each, say so (\"..., one model each\") or plan one goal "
            f"per column ('predict {columns[0]}', then 'predict {columns[1]}').", columns,
            each_request(goal, {at for m in zone if m.column in columns for at in range(m.start, m.end)}))
    for rival in rivals:
        if _rank_key(rival, goal.stems, verbs) == _rank_key(first, goal.stems, verbs) and first.column != favourite:
            raise AmbiguousGoal(
                f"The goal could mean two columns to predict: '{first.column}' or '{rival.column}'. Which one "
                f"should the model predict? One pipeline predicts one column; for both, plan one goal per column "
                f"('predict {first.column}', then 'predict {rival.column}').",
                [_reading(goal, profile, m) for m in (first, rival)])
    return first


def _reading(goal: Goal, profile: DatasetProfile, match: Match) -> Reading:
    """The reading that predicts the column ``match`` names, as a question offers it."""
    task, why = supervised_type(goal, profile, match.column)
    return Reading(task_type=task, target=match.column, evidence=f"{target_reason(match)}; {why}")


def each_request(goal: Goal, named: set[int]) -> str | None:
    """The goal's words asking for a model of each target it names ("separately", "both price and rooms", "one model
    each", "a pipeline per target", "two models"), or None when it asks for no such thing. ``named`` are the positions
    of the words naming the targets: "each of price and rooms" counts them, "each of the houses" counts the rows;
    "separately" counts beside the targets or the prediction, not elsewhere ("show the errors separately")."""
    stems = goal.stems

    def counts_targets(at: int) -> bool:
        """Whether what the words from ``at`` on count is the targets, a model, or nothing said (the goal ends)."""
        while at < len(stems) and stems[at] in PER_FILLER and at not in named:
            at += 1
        return at == len(stems) or at in named or stems[at] in PER_WHAT

    def beside_the_prediction(at: int) -> bool:
        """Whether the word next to ``at``, small words aside, is a target, a model or a task word: "price and rooms
        separately", "separately predict", not "... and show the errors separately"."""
        nearest = [next((i for i in steps if stems[i] not in STOPWORDS | PER_FILLER), None)
                   for steps in (range(at - 1, -1, -1), range(at + 1, len(stems)))]
        return any(i is not None and (i in named or stems[i] in MODEL_NOUNS or stems[i] in TASK_STEMS)
                   for i in nearest)

    for at, s in enumerate(stems):
        after = stems[at + 1] if at + 1 < len(stems) else None
        if s in EACH_WORDS and beside_the_prediction(at) or s in BOTH_WORDS and counts_targets(at + 1):
            return goal.words[at]
        if s in MODEL_COUNTS and after in MODEL_NOUNS:
            return goal.said(at, at + 2)
        if s in PER_WORDS and at and stems[at - 1] in MODEL_NOUNS and (after is None or after in STOPWORDS):
            return goal.said(at - 1, at + 1)  # "one model each", not "a model per customer"
        if s in PER_WORDS and counts_targets(at + 1):
            return goal.said(at, at + 2)
    return None


def target_reason(match: Match) -> str:
    how = {
        MatchKind.EXPLICIT: "the goal designates it explicitly",
        MatchKind.EXACT: "the goal names the column",
        MatchKind.SYNONYM: "a synonym of its name",
        MatchKind.DESCRIBED: "the data's dictionary describes it in the goal's words, among them",
        MatchKind.DERIVED: "a word formed from its name",
        MatchKind.ABBREVIATION: "its name abbreviates",
        MatchKind.ACRONYM: "its name is the initials of",
        MatchKind.CONTRACTION: "its name contracts",
        MatchKind.PARTIAL: "part of its name is",
        MatchKind.CLASSES: "the goal lists its classes, among them",
        MatchKind.VALUE: "the goal mentions its class",
        MatchKind.FUZZY: "a misspelling of its name, read as",
    }[match.kind]
    return f"{match.column}: {how}: '{match.said}'"


def named_but_absent(goal: Goal, verbs: list[int]) -> str | None:
    """The noun the task verb governs ("predict the revenue") when it is no everyday word: a column that isn't there.

    Determiners, question words and nouns for the rows ("customers") are skipped; a preposition or a number ends
    the search ("train a model in 5 minutes" names nothing).
    """
    if not verbs:
        return None
    for at in range(verbs[0] + 1, goal.features_from if verbs[0] < goal.features_from else len(goal.stems)):
        s = goal.stems[at]
        if s in SKIPPABLE or s in GENERIC_NOUNS or s in VOCABULARY:
            continue
        return goal.words[at] if s.isalpha() and s not in STOPWORDS and len(s) >= 3 else None
    return None
