"""Where the goal names a column, and how surely: by its name, a synonym, an abbreviation, its initials, part of its
name, its classes or a misspelling, or designated outright ("target is X"). The target, the column an exploration
centres on and the columns a goal rules in or out are all found among these mentions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from dagsmith.agents.intent.columns import CLASS_TYPES
from dagsmith.agents.intent.constraints import METRICS
from dagsmith.agents.intent.lexicon import (
    GENERIC_NOUNS,
    OBJECT_LINKS,
    STOPWORDS,
    SYNONYMS,
    TASK_STEMS,
    VOCABULARY,
    stems_of,
)
from dagsmith.agents.intent.reading import ColumnName, Goal, column_names, read_goal, similar
from dagsmith.agents.intent.model_mentions import mentions
from dagsmith.data.sniffing import EXTENSIONS
from dagsmith.models.profile import DatasetProfile
from dagsmith.text import stem, words

#: Values too common to point at one column when a goal mentions them.
COMMON_VALUES = frozenset(stems_of("yes no true false none other others unknown good bad normal typical average "
                                   "high low new old standard regular fair"))

#: The most goal words read as one run-together column name.
RUN_TOGETHER_WORDS = 7
#: Fewest distinct words of a column's description a goal must use to name the column by it: one shared word
#: ("value") is chance, two ("home value" against "median value of the homes in the block") a description.
MIN_DESCRIBED_WORDS = 2
#: Shortest one-word name read as goal words run together ("lowfatdiet"), and as their first letters ("hospvis"):
#: shorter names are spelled by chance.
MIN_RUN_TOGETHER = 6
MIN_ABBREVIATED_RUN = 5


class MatchKind(StrEnum):
    """How a column was found in the goal, best first; the score is how sure that makes us."""

    EXPLICIT = "explicit"
    EXACT = "exact"
    SYNONYM = "synonym"
    DESCRIBED = "described"
    DERIVED = "derived"
    ABBREVIATION = "abbreviation"
    ACRONYM = "acronym"
    CONTRACTION = "contraction"
    PARTIAL = "partial"
    CLASSES = "classes"
    VALUE = "value"
    FUZZY = "fuzzy"
    PROFILE = "profile"


MATCH_SCORE = {
    MatchKind.EXPLICIT: 1.0, MatchKind.EXACT: 0.95, MatchKind.SYNONYM: 0.85, MatchKind.DESCRIBED: 0.8,
    MatchKind.DERIVED: 0.85,
    MatchKind.ABBREVIATION: 0.7, MatchKind.ACRONYM: 0.7, MatchKind.CONTRACTION: 0.7, MatchKind.PARTIAL: 0.65,
    MatchKind.CLASSES: 0.9, MatchKind.VALUE: 0.6, MatchKind.FUZZY: 0.5, MatchKind.PROFILE: 0.45,
}
#: Matches this good name a column outright: enough for a goal that is only a column name, and two of them
#: joined by "and" are two targets.
STRONG_MATCH = MATCH_SCORE[MatchKind.SYNONYM]
#: How much less a partial mention scores when it covers none of the name's other words ('year' for Year_Renovated
#: against 'year ... opened' for Year_Opened).
PARTIAL_SPREAD = 0.1

#: Mentions by a column's name (not by its classes, a value, a misspelling or the profile), which a list is made of.
NAME_KINDS = frozenset({MatchKind.EXACT, MatchKind.SYNONYM, MatchKind.DESCRIBED, MatchKind.DERIVED,
                        MatchKind.ABBREVIATION, MatchKind.ACRONYM, MatchKind.CONTRACTION, MatchKind.PARTIAL})
#: Fewest columns named one after another that make a list of inputs; two may be one name inside another ("credit
#: card balance": `Cards`, `Balance`).
MIN_LISTED = 3
#: What may stand between two items of a list once the commas are gone, and how many such words at most.
LIST_JOINS = frozenset(stems_of("and or plus the a an"))
MAX_LIST_JOIN = 2

#: "target is SalesPrice", "label: species", "Cancelled as the target", "predict the column 'churn'".
_EXPLICIT_TARGET = (
    re.compile(r"\b(?:target|label|outcome|response|dependent variable|y)(?:\s+(?:column|variable|field))?"
               r"\s*(?:is|=|:|should be|will be)\s*[\"'`]?([\w.()/ -]+?)[\"'`]?\s*(?:[,;.!?]|$)", re.I),
    re.compile(r"[\"'`]?([\w.()/-]+)[\"'`]?\s+(?:column\s+)?as\s+(?:the\s+|my\s+)?(?:target|label|outcome)\b", re.I),
    re.compile(r"\bcolumn\s+[\"'`]([^\"'`]+)[\"'`]", re.I),
)

#: A word written the way column names are and prose is not: words joined by underscores or dots, or camelCase
#: ("colour_of_the_moon", "nurse.trained.abroad", "monthlyCharges").
_COLUMN_SHAPED = re.compile(r"(?<![\w.])(?:[A-Za-z][A-Za-z0-9]*(?:[_.][A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*)(?!\w)")
#: Fewest letters a column-shaped word needs to be taken for a name ("e.g", "x_1" are not).
MIN_SHAPED_LETTERS = 4


@dataclass(frozen=True)
class Match:
    column: str
    kind: MatchKind
    start: int
    end: int
    said: str  # the goal's words that matched
    penalty: float = 0.0  # a partial mention covering less of the name scores lower

    @property
    def score(self) -> float:
        return MATCH_SCORE[self.kind] - self.penalty


def _abbreviates(column_word: tuple[str, str], goal_word: tuple[str, str]) -> bool:
    """'pop' for population (prefixes); 'hwy' for highway, 'avg' for average (consonant skeletons).

    Both words come as (stem, as written): prefixes compare stems, skeletons compare the letters as written.
    """
    (short, letters), (stemmed, word) = column_word, goal_word
    if len(short) < 3 or short in STOPWORDS or short[0] != word[0]:
        return False
    if len(stemmed) > len(short) and stemmed.startswith(short):
        return True
    rest = iter(word)
    return len(word) > len(letters) and sum(ch in "aeiou" for ch in letters) <= 1 and all(ch in rest for ch in letters)


def _span_matches(name: ColumnName, goal: Goal) -> Iterable[Match]:
    """Exact, abbreviated and partial mentions of one column's name."""
    column, stems, n = name.column.name, goal.stems, len(name.stems)
    coverage = len(set(name.stems) & set(stems)) / n
    for at in range(len(stems) - n + 1):
        pairs = list(zip(name.written, zip(stems[at : at + n], goal.words[at : at + n], strict=True), strict=True))
        if all(c[0] == g[0] for c, g in pairs):
            yield Match(column, MatchKind.EXACT, at, at + n, goal.said(at, at + n))
        elif n > 1 and all(c[0] == g[0] or _abbreviates(c, g) for c, g in pairs):  # "overall rating": Overall_Rtg
            yield Match(column, MatchKind.ABBREVIATION, at, at + n, goal.said(at, at + n))
    for at, (s, word) in enumerate(zip(stems, goal.words, strict=True)):
        if s in STOPWORDS:
            continue
        if len(name.joined) >= 4 and s == stem(name.joined):
            yield Match(column, MatchKind.EXACT, at, at + 1, word)
        elif len(name.spelled) == 1 and (_derived(s, stem(name.joined)) or _derived(s, name.joined)):
            # "smoker" for smoke, "lefty" for left; "unemployment" for unemploy, whose stem ends in 'i'
            yield Match(column, MatchKind.DERIVED, at, at + 1, word)
        elif run := _run_together(name, goal, at):  # "low fat diet": lowfatdiet
            yield Match(column, run[1], at, run[0], goal.said(at, run[0]))
        elif s not in TASK_STEMS and any(_abbreviates(c, (s, word)) for c in name.written):
            yield Match(column, MatchKind.ABBREVIATION, at, at + 1, word)
        elif s in name.stems and len(s) >= 3:
            yield Match(column, MatchKind.PARTIAL, at, at + 1, word, PARTIAL_SPREAD * (1 - coverage))
    for c in name.stems:  # acronyms: "pce" for personal consumption expenditures
        n = len(c)
        for at in range(len(stems) - n + 1) if 3 <= n <= 5 and c.isalpha() else ():
            span = stems[at : at + n]
            if "".join(w[0] for w in span) == c and all(len(w) > 2 and w not in STOPWORDS for w in span):
                yield Match(column, MatchKind.ACRONYM, at, at + n, goal.said(at, at + n))


#: Endings that make a word of a name without changing what it is about: who does it, of that kind, the act of it
#: ("participates" for participation, "approved" for approval, "fails" for failure, "enrolled" for enrolment).
DERIVATION_ENDINGS = frozenset({"er", "r", "or", "ist", "i", "ie", "ier", "ion", "al", "ure", "ment", "ance", "ence"})


def _derived(word: str, name: str) -> bool:
    """One stem is the other plus a derivational ending ("smoker"/"smoke", "lefty"/"left"), both at least 4 letters."""
    shorter, longer = sorted((word, name), key=len)
    return len(shorter) >= 4 and longer.startswith(shorter) and longer[len(shorter):] in DERIVATION_ENDINGS


def _run_together(name: ColumnName, goal: Goal, at: int) -> tuple[int, MatchKind] | None:
    """Where goal words starting at ``at`` spell a one-word name, small words between allowed: whole words or stems
    ("low fat diet" for lowfatdiet, "signs up for the newsletter" for signupnewsletter, an exact mention), else
    the words' first letters ("hospital visits" for hospvis, "net farm income" for nincome with one word passed over,
    a contraction). Task words ("predict") never give first letters."""
    if len(name.spelled) != 1 or len(name.joined) < MIN_ABBREVIATED_RUN:
        return None
    if len(name.joined) >= MIN_RUN_TOGETHER and (end := _spell(name.joined, goal, at, prefixes=False)):
        return end, MatchKind.EXACT
    end = _spell(name.joined, goal, at, prefixes=True)
    return (end, MatchKind.CONTRACTION) if end else None


def _spell(rest: str, goal: Goal, at: int, *, prefixes: bool, used: int = 0, longest: int = 0,
           passed: bool = False) -> int | None:
    """The end of the run of goal words from ``at`` spelling ``rest``, each word giving itself or its stem, or (with
    ``prefixes``, small words aside) its first letters; at least two words give, one of them three letters or more.
    Small words between them may give nothing; with ``prefixes``, so may one other word."""
    if not rest:
        return at if used >= 2 and longest >= 3 else None
    if at >= len(goal.words) or used >= RUN_TOGETHER_WORDS:
        return None
    word, s = goal.words[at], goal.stems[at]
    pieces = [word, s]
    if prefixes and s not in TASK_STEMS and s not in STOPWORDS:
        pieces = [word[:k] for k in range(min(len(word), len(rest)), 0, -1)]
    if not prefixes or s not in TASK_STEMS:
        for piece in pieces:
            if rest.startswith(piece) and (end := _spell(rest[len(piece):], goal, at + 1, prefixes=prefixes,
                                                         used=used + 1, longest=max(longest, len(piece)),
                                                         passed=passed)):
                return end
    if not used:
        return None  # the run starts at ``at``
    if s in STOPWORDS:
        return _spell(rest, goal, at + 1, prefixes=prefixes, used=used, longest=longest, passed=passed)
    if prefixes and not passed:
        return _spell(rest, goal, at + 1, prefixes=prefixes, used=used, longest=longest, passed=True)
    return None


def _synonym_matches(name: ColumnName, goal: Goal) -> Iterable[Match]:
    values = {stem(v.value.lower()) for v in name.column.top_values}
    for synonym in SYNONYMS:
        if not (set(name.stems) | {name.joined}) & synonym.column:
            continue
        if synonym.values and not values & synonym.values:
            continue
        for at, s in enumerate(goal.stems):
            if s in synonym.goal:
                yield Match(name.column.name, MatchKind.SYNONYM, at, at + 1, goal.words[at])


def naming_words(matches: Iterable[Match]) -> set[int]:
    """The positions of the goal's words that name a column outright, by its name, its classes or its description:
    no task words there ("the temperature anomaly" is a column to forecast, not anomalies to find)."""
    return {at for m in matches if m.kind in {MatchKind.EXACT, MatchKind.CLASSES, MatchKind.DESCRIBED}
            for at in range(m.start, m.end)}


def _described_matches(profile: DatasetProfile, goal: Goal) -> Iterable[Match]:
    """The column whose description (the data's dictionary) the goal's words follow: at least ``MIN_DESCRIBED_WORDS``
    of its content words, and more than any other column's description shares."""
    said = {at: s for at, s in enumerate(goal.stems)
            if s not in STOPWORDS and len(s) >= 3 and not goal.among_inputs(at)}
    used = {}  # column -> the positions of the goal's words its description uses
    for column in profile.columns:
        if column.description:
            described = set(stems_of(column.description))
            used[column.name] = [at for at, s in said.items() if s in described]
    # a task word counts only next to a word of the description that is none, in one phrase ("temperature anomaly"),
    # never apart from it ("predict" in "predict the price" against "the price predicted by a model")
    used = {name: [at for at in ats if said[at] not in TASK_STEMS or any(
        near in ats and said[near] not in TASK_STEMS for near in (at - 1, at + 1))] for name, ats in used.items()}
    distinct = {name: len({said[at] for at in ats}) for name, ats in used.items()}
    ranked = sorted(distinct, key=distinct.get, reverse=True)
    if not ranked or distinct[ranked[0]] < MIN_DESCRIBED_WORDS or \
            (len(ranked) > 1 and distinct[ranked[1]] == distinct[ranked[0]]):
        return
    for at in used[ranked[0]]:
        yield Match(ranked[0], MatchKind.DESCRIBED, at, at + 1, goal.words[at])


def _value_matches(profile: DatasetProfile, goal: Goal) -> Iterable[Match]:
    """A goal word that is, or is derived from, a class of exactly one categorical column ("is the tumour malignant?",
    "diagnose impairment" over Impaired/Control); two or more of one column's classes, short codes included, name it
    as strongly as a synonym ("well (WS) or poorly (PS)")."""
    owners: dict[str, set[str]] = {}
    classes: dict[str, set[str]] = {}  # column -> the stems of its one-word values
    for column in profile.columns:
        if column.unique <= 50 and column.semantic_type in CLASS_TYPES:
            for value in column.top_values:
                stems = stems_of(value.value)
                for s in stems:
                    if len(s) >= 4 and s not in COMMON_VALUES and s not in STOPWORDS:
                        owners.setdefault(s, set()).add(column.name)
                if len(stems) == 1 and len(stems[0]) >= 2 and stems[0].isalpha() and stems[0] not in STOPWORDS:
                    classes.setdefault(column.name, set()).add(stems[0])
    for column, values in classes.items():
        said = [at for at, s in enumerate(goal.stems) if s in values]
        if len({goal.stems[at] for at in said}) >= 2:
            for at in said:
                yield Match(column, MatchKind.CLASSES, at, at + 1, goal.words[at])
    for at, s in enumerate(goal.stems):
        # a value's own word, else a word derived from it ("impairment" for Impaired)
        owner = owners.get(s) or set().union(*(columns for value, columns in owners.items() if _derived(s, value)))
        if len(owner) == 1:
            yield Match(next(iter(owner)), MatchKind.VALUE, at, at + 1, goal.words[at])


def _fuzzy_matches(names: list[ColumnName], goal: Goal) -> Iterable[Match]:
    """Last resort for misspelt names ("survivd", "prcie"), never another first letter ("mother" is no `other`)."""
    for at, (word, s) in enumerate(zip(goal.words, goal.stems, strict=True)):
        if len(word) < 4 or s in STOPWORDS or s in GENERIC_NOUNS or s in VOCABULARY:
            continue
        for name in names:
            spelled = [w for w in (*words(name.column.name), name.joined) if len(w) >= 4]
            if any(similar(word, w) and word[0] == w[0] for w in spelled):  # typing rarely changes the first letter
                yield Match(name.column.name, MatchKind.FUZZY, at, at + 1, word)


def _objects_of_synonyms(matches: list[Match], stems: tuple[str, ...]) -> set[Match]:
    """Columns named as the object of a synonym ("cancel their contract", "leave the company"): not targets. A
    synonym that is its column's own name ("price, rooms and age") takes no object."""
    named = {(m.column, m.start, m.end) for m in matches if m.kind is MatchKind.EXACT}
    synonyms = [m for m in matches if m.kind is MatchKind.SYNONYM and (m.column, m.start, m.end) not in named]
    return {
        m for m in matches for s in synonyms
        if s.column != m.column and s.end <= m.start <= s.end + 2 and set(stems[s.end : m.start]) <= OBJECT_LINKS
    }


def _nested(matches: list[Match]) -> set[Match]:
    """Mentions inside a longer mention of another column's whole name: 'condition' in 'overall condition'."""
    whole = [m for m in matches if m.end - m.start > 1 and m.kind in {MatchKind.EXACT, MatchKind.ABBREVIATION}]
    return {
        m for m in matches for w in whole
        if w.column != m.column and w.start <= m.start and m.end <= w.end and m.end - m.start < w.end - w.start
    }


def _case_twins(matches: list[Match], goal: Goal) -> set[Match]:
    """Mentions of a column whose name differs only in case from one the goal writes exactly: 'price' names the column
    price, not Price (read in lower case, both match it equally)."""
    written = {m.column for m in matches if re.search(rf"(?<!\w){re.escape(m.column)}(?!\w)", goal.text)}
    folded = {name.casefold() for name in written}
    return {m for m in matches if m.column not in written and m.column.casefold() in folded}


def column_matches(goal: Goal, profile: DatasetProfile) -> list[Match]:
    """Every mention of a column in the goal, by name, synonym, abbreviation or class value; fuzzy only if none."""
    names = column_names(profile)
    found = [m for name in names for m in (*_span_matches(name, goal), *_synonym_matches(name, goal))]
    found = [m for m in found if m.start not in goal.asides]  # "(red-tailed, sharp-shinned)" lists classes
    found += _value_matches(profile, goal)
    found += _described_matches(profile, goal)
    dropped = _objects_of_synonyms(found, goal.stems) | _nested(found) | _case_twins(found, goal)
    return [m for m in found if m not in dropped] or list(_fuzzy_matches(names, goal))


def column_lists(matches: list[Match], goal: Goal) -> list[range]:
    """Where the goal names ``MIN_LISTED`` or more columns one after another with nothing but list joins between them
    ("solar radiation, temperature and wind speed": the commas are gone from the words), the word positions of each
    such list. A list names what a model uses, not its one target."""
    names = sorted((m for m in matches if m.kind in NAME_KINDS), key=lambda m: (m.start, -m.end))
    items: list[Match] = []
    for m in names:  # the longest mention at each place, none overlapping the one before
        if not items or m.start >= items[-1].end:
            items.append(m)
    lists, run = [], items[:1]
    for m in (*items[1:], None):
        if m is not None and m.start - run[-1].end <= MAX_LIST_JOIN and \
                set(goal.stems[run[-1].end : m.start]) <= LIST_JOINS:
            run.append(m)
            continue
        if len({item.column for item in run}) >= MIN_LISTED:
            lists.append(range(run[0].start, run[-1].end))
        run = [m]
    return lists


def explicit_target(goal: str, profile: DatasetProfile) -> tuple[Match | None, str | None]:
    """A column named as "target is X" / "X as the target" / quoted: (its match, or the name when absent)."""
    by_letters = {"".join(words(c.name)): c.name for c in profile.columns}
    for pattern in _EXPLICIT_TARGET:
        found = pattern.search(goal)
        if not found:
            continue
        said = found.group(1).strip()
        letters = "".join(words(said))
        column = by_letters.get(letters) or next((c for key, c in by_letters.items() if similar(letters, key)), None)
        return (Match(column, MatchKind.EXPLICIT, 0, 0, said), None) if column else (None, said)
    return None, None


def absent_column_names(goal: str, profile: DatasetProfile) -> list[str]:
    """Names the goal writes the way columns are written that no column of the table has, letter for letter (case,
    underscores and dots aside). Whoever writes ``colour_of_the_moon`` means a name exactly, so it is never read as
    a column it resembles. Metric, model and file names written so (``roc_auc``, ``random_forest``, ``churn.csv``)
    are not column names."""
    present = {"".join(words(c.name)) for c in profile.columns}
    absent = []
    for found in _COLUMN_SHAPED.finditer(goal):
        name = found.group(0)
        letters = "".join(words(name))
        if (letters in present or len(letters) < MIN_SHAPED_LETTERS or name.lower() in METRICS
                or f".{name.rsplit('.', 1)[-1].lower()}" in EXTENSIONS
                or any(m.said == " ".join(words(name)) for m in mentions(" ".join(words(name))))):
            continue
        absent.append(name)
    return list(dict.fromkeys(absent))


def column_named(phrase: str, profile: DatasetProfile) -> str | None:
    """The column a short phrase of the goal names ("the size", "zip code"), by the same matching as the target."""
    found = [m for m in column_matches(read_goal(phrase, profile), profile)
             if m.kind not in {MatchKind.VALUE, MatchKind.CLASSES} and m.score >= MATCH_SCORE[MatchKind.PARTIAL]]
    return max(found, key=lambda m: m.score).column if found else None
