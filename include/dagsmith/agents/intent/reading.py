"""The goal read once into what every rule looks at: its words, their stems with misspelt task words fixed, where
the inputs start ("based on ..."), which words are a list in parentheses, and whether it asks a question about the
rows. Column names are read the same way, so the goal's words and a column's compare stem for stem.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from dagsmith.agents.intent.lexicon import GENERIC_NOUNS, STOPWORDS, TASK_PHRASES, VOCABULARY, Family, stems_of
from dagsmith.models.profile import ColumnProfile, DatasetProfile
from dagsmith.text import stem, words

#: Units and filler inside column names ("wing_span_mm", "stem length (cm)"): never how a user names it.
NAME_NOISE = frozenset(stems_of("cm mm kg g lb lbs km pct usd num of the in per is has"))

#: difflib similarity a misspelt word needs to count as a task word or a column name.
FUZZY_CUTOFF = 0.84

#: Where the goal starts listing inputs: a column after these is a feature, not the target. "look at" opens the
#: inputs only after the goal has said something else ("who has insurance? look at age and education").
_FEATURE_MARKER = re.compile(r"\b(?:based on|base (?:it|this|that) on|using|from|given|by looking at|according to|"
                             r"as features|with features|considering|taking into account|(?<=\w )look(?:ing)? at)\b")
#: Task words that end a list of inputs: what follows names the target ("using tenure and contract, predict churn").
#: Weaker hints ("model", "will") may be part of the list.
_INPUTS_END = tuple(phrase for family, phrase, weight in TASK_PHRASES if family is Family.SUPERVISED and weight >= 1.5)
#: A question about the rows that a prediction answers: yes/no ("does ...?", "was ...?") or who/which.
_QUESTION = re.compile(r"^\s*(?:does|do|did|is|are|was|were|will|would|can|could|has|have|who|which)\b[^?]*\?")


@dataclass(frozen=True)
class Goal:
    """The goal as the rules see it: its words, their stems (typos fixed), and where the inputs start."""

    words: tuple[str, ...]
    stems: tuple[str, ...]
    features_from: int  # index of the first word after "based on"/"from"/... (len(words) when there is none)
    features_to: int  # index of the task word that ends the inputs ("... to predict churn"), else len(words)
    corrections: tuple[tuple[str, str], ...]
    asides: frozenset[int] = frozenset()  # words of a parenthesised list: examples or classes, not the column asked for
    question: bool = False  # the goal asks a question about the rows that a prediction answers
    text: str = ""  # as written, for the case of a name ('price' against a column 'Price')

    def among_inputs(self, at: int) -> bool:
        """Whether the word at ``at`` is in the list of inputs ("based on age and income")."""
        return self.features_from <= at < self.features_to

    def said(self, start: int, end: int) -> str:
        return " ".join(self.words[start:end])


def similar(a: str, b: str) -> bool:
    """Typo-tolerant equality: one swap of neighbouring letters ("prcie"), or difflib similarity >= FUZZY_CUTOFF
    between words whose lengths differ by one letter at most ("forest" is no typo of "forecast")."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]:
            return True
    return difflib.SequenceMatcher(None, a, b).ratio() >= FUZZY_CUTOFF


def _spelling_fix(s: str) -> str | None:
    """The vocabulary stem a misspelt stem was meant to be. A word that extends another ('personal', 'persona') is a
    different word, not a typo; so is one with another first letter, which typing rarely changes ('participate',
    'anticipate')."""
    close = [v for v in VOCABULARY if v[0] == s[0] and similar(s, v) and not (s.startswith(v) or v.startswith(s))]
    return max(close, key=lambda v: (difflib.SequenceMatcher(None, s, v).ratio(), v), default=None)


def read_goal(text: str, profile: DatasetProfile) -> Goal:
    """Split the goal into words and stems, fixing misspelt task words ("predcit", "clasify") but no column names."""
    known = {*VOCABULARY, *STOPWORDS, *GENERIC_NOUNS, *(s for name in column_names(profile) for s in name.stems)}
    tokens, asides = _tokens_and_asides(text)
    stems: list[str] = []
    corrections: list[tuple[str, str]] = []
    for word in tokens:
        s = stem(word)
        s = s[:-2] if s.endswith("li") and s[:-2] in VOCABULARY else s  # the adverb of a task word ("unusually")
        fix = _spelling_fix(s) if len(s) >= 5 and s.isalpha() and s not in known else None
        if fix:
            corrections.append((word, VOCABULARY[fix]))
        stems.append(fix or s)
    marker = _FEATURE_MARKER.search(" ".join(tokens))
    features_from = len(" ".join(tokens)[: marker.start()].split()) if marker else len(tokens)
    read = tuple(stems)
    features_to = min((at for phrase in _INPUTS_END for at in find_phrase(read, phrase) if at > features_from),
                      default=len(tokens))
    question = any(_QUESTION.match(sentence) for sentence in re.split(r"(?<=[.!?])\s+", text))
    return Goal(tuple(tokens), read, features_from, features_to, tuple(corrections), asides, question, text)


def _tokens_and_asides(text: str) -> tuple[list[str], frozenset[int]]:
    """The goal's words, and which of them are in a parenthesised list ("(red-tailed, sharp-shinned or Cooper's)");
    a single name in parentheses ("(tenure)") is the user pointing at a column and stays a mention."""
    tokens: list[str] = []
    asides: set[int] = set()
    for part in re.split(r"(\([^()]*\))", text):
        found = words(part)
        if part.startswith("(") and re.search(r",|\bor\b|\band\b", part):
            asides.update(range(len(tokens), len(tokens) + len(found)))
        tokens += found
    return tokens, frozenset(asides)


def find_phrase(stems: tuple[str, ...], phrase: tuple[str, ...]) -> list[int]:
    """Every position where ``phrase`` starts among ``stems``."""
    n = len(phrase)
    return [i for i in range(len(stems) - n + 1) if stems[i : i + n] == phrase]


@dataclass(frozen=True)
class ColumnName:
    """A column's name read like the goal, so the two compare word for word."""

    column: ColumnProfile
    stems: tuple[str, ...]  # content stems of the name ("Sales_Price" -> sale, pric)
    spelled: tuple[str, ...]  # the same words as written (sale, price)
    joined: str  # the name's letters run together ("salesprice")

    @property
    def written(self) -> Iterable[tuple[str, str]]:
        return zip(self.stems, self.spelled, strict=True)


def column_names(profile: DatasetProfile) -> list[ColumnName]:
    names = []
    for column in profile.columns:
        spelled = [(stem(w), w) for w in words(column.name)]
        content = [(s, w) for s, w in spelled if s not in NAME_NOISE and not s.isdigit()] or spelled
        names.append(ColumnName(column, tuple(s for s, _ in content), tuple(w for _, w in content),
                                "".join(w for _, w in spelled)))
    return names
