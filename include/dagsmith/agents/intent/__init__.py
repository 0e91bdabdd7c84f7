"""Agent A2, the intent detector: what the user wants, read from a goal in plain language and the data profile.

This is the deterministic reasoner. Weighted word rules over the goal pick a task family; the profile then
settles what words cannot: the target's type decides classification against regression, its classes binary
against multiclass, and a time column whether forecasting is possible at all. Every inferred field gets a
reason a person can check. A goal it cannot read with confidence raises ``AmbiguousGoal`` with a question
instead of a guess. The goal is only ever data: it is split into words and compared, never executed.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum

from dagsmith.agents.column_requests import column_constraints, excluded_columns
from dagsmith.agents.model_mentions import mentions
from dagsmith.agents.profiler.semantic import NOT_FEATURES
from dagsmith.agents.repeats import repeated_ids
from dagsmith.agents.stages import ordered
from dagsmith.text import stem, words
from dagsmith.models.catalog import Stage, TaskType
from dagsmith.models.intent import (
    AmbiguousGoal,
    Constraint,
    ConstraintKind,
    Intent,
    IntentIssue,
    InvalidIntent,
    IssueLevel,
)
from dagsmith.models.profile import ColumnProfile, DatasetProfile, SemanticType

__all__ = ["detect_intent", "understand", "validate_intent"]

# --------------------------------------------------------------------------------------------- words

def stems_of(text: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in words(text))


#: Function words and everyday verbs: never a column the user names, never a task signal.
STOPWORDS = frozenset(stems_of(
    "a an the of to in on at for by with from as and or but if then than so that this these those it its "
    "is are was were be been being am do does did done have has had having will would shall should can could "
    "may might must i me my we us our you your they them their he she his her there here what which who whom "
    "whose when where how all any each every some many much more most less least few very just only also not "
    "no yes please want wanna need like help use try make build create train fit run find know see show tell "
    "give get let go going gonna about into over under up down out off again per based one ones such other "
    "else something anything thing things way able new good best better well really hi hello hey thanks ok "
    "okay lets using given our data dataset table file frame across among between within throughout during"
))
#: Nouns that name the rows or the idea of a target, not a column: "predict which customers leave".
GENERIC_NOUNS = frozenset(stems_of(
    "customer client user employee staff worker people person patient applicant borrower passenger row record "
    "sample observation instance item entry case house home property diamond penguin flower plant car wine oil "
    "concrete mixture bird animal company business value outcome target label class category type kind group "
    "result variable column field feature model future next someone one month week year day time period member "
    "subscriber"
))
#: Words between two named columns that mean the goal asks for both ("price and cut").
CONJUNCTIONS = frozenset(stems_of("and or plus also well as both either the a an its their of"))
JOINING_WORDS = frozenset(stems_of("and or plus both either"))
#: The most goal words, small ones included, read as one run-together column name.
RUN_TOGETHER_WORDS = 7
#: Words that lead a column's mention without naming another thing ("and also the number of rooms").
QUANTITY_WORDS = frozenset(stems_of("number amount count total level rate share percentage quantity"))
#: Words between a verb and its object ("cancel their contract", "default on the loan").
OBJECT_LINKS = frozenset(stems_of("the a an their his her its my our your on with of"))
#: Words skipped when looking for the noun a task verb governs ("predict whether the customer will ...").
SKIPPABLE = frozenset(stems_of("the a an my our your their his her its this that these those which what whether if who "
                             "will would is are be going gonna to likely how much many"))
NEGATIONS = frozenset(stems_of("no not without avoid exclude excluding except never dont doesnt nor instead rather"))
#: Words that start a new clause, ending the reach of a negation.
CLAUSE_BREAKS = frozenset(("and", "but", "then", "while", "although", "though", "however"))

# --------------------------------------------------------------------------------------------- task rules


class Family(StrEnum):
    """What kind of answer the goal asks for, before the profile refines it into a TaskType."""

    SUPERVISED = "predict a column"
    CLUSTERING = "group similar rows"
    REDUCTION = "reduce the columns to a few components"
    ANOMALY = "find unusual rows"
    EXPLORATION = "explore the data"


#: Task words by family and weight, matched on word stems (so "predicting" counts as "predict"). Unambiguous
#: words weigh 3, ordinary task verbs 2, hints that need company 1.
TASK_RULES: dict[Family, dict[float, str]] = {
    Family.SUPERVISED: {
        3: "classify, classification, classifier, regression, regressor, regress",
        2: "predict, prediction, predictive, forecast, categorise, categorize, supervised, who will, tell apart, "
           "distinguish, diagnose, anticipate, foresee",
        1.5: "estimate, estimation, whether, likelihood, probability, guess, driver, how much, how many, how heavy, "
             "how big, how large, how long, how tall, how high, how old, how strong, how fast, how far",
        1: "likely to, about to, chance, risk of, determine, identify, why, model, target, label, flag, screen",
        0.5: "will",
    },
    Family.CLUSTERING: {
        3: "cluster, segmentation, k means, kmeans",
        2.5: "segment",
        2: "grouping, persona, archetype, fall into",
        1.5: "group, group similar, cohort, partition",
        1: "into groups, similar, unsupervised, distinct type",
    },
    Family.REDUCTION: {
        3: "dimensionality, pca, principal component, t sne, tsne, umap, svd",
        2: "dimension, compress, compression, embed, embedding, low dimensional",
        1.5: "2 d, two dimensions, high dimensional, latent, fewer columns, two axes, 2 axes, map onto, project onto",
        1: "reduce, component, projection",
    },
    Family.ANOMALY: {
        3: "anomaly, anomalous, outlier",
        2.5: "unusual, weird, abnormal, suspicious, fraud, fraudulent, atypical",
        2: "strange, odd, novelty, irregular, stand out",
        1.5: "deviate, deviation, doesnt fit, dont fit, does not fit, do not fit, glitch",
        1: "rare",
    },
    Family.EXPLORATION: {
        3: "explore, exploration, exploratory, eda, whats in, what is in",
        2.5: "describe, descriptive, summarise, summarize, summary, overview, get to know, tell me about, audit, "
             "what drives, what affects, what influences, what explains, factors behind, "
             "related to, relates to, associated with, association with, relationship with, correlated with, "
             "correlations with, which factors, what factors, factors that, factors influencing, factors affecting",
        2: "insight, statistic, stats, profile",
        1.5: "understand, distribution, correlation, correlated, investigate, inspect",
        1: "relationship, pattern, look at, analyse, analyze, analysis, visualise, visualize, plot, chart, "
           "missing values",
    },
}
#: "Outliers" beside other analyses ("distributions, correlations and outliers") asks for a list per column in an
#: exploration, not for rows to score.
OUTLIER_STEM = stem("outliers")
#: Words after which an exploratory goal names the column the others are related to ("what drives weekly hours").
FOCUS_PHRASES = tuple(stems_of(phrase) for phrase in (
    "drives", "drive", "affects", "affect", "influences", "influence", "determines", "explains", "behind",
    "related to", "relates to", "associated with", "association with", "relationship with", "correlated with",
    "correlations with", "impact on", "effect on"))
#: Below this total no family has been asked for: the goal is a question back to the user.
MIN_TASK_SCORE = 0.5
#: What naming a column adds to "predict it": enough for a bare "churn?", less than any task word.
NAMED_COLUMN_WEIGHT = 0.5
#: Jinja expressions, statements and comments (Airflow's templates), closed or cut off at the end of the goal.
TEMPLATE_MARKUP = re.compile(r"\{\{.*?(?:\}\}|$)|\{%.*?(?:%\}|$)|\{#.*?(?:#\}|$)", re.DOTALL)
#: Weight of task words that come after "based on"/"from": they describe inputs, not the task. Once a column
#: to predict is named before the inputs, they carry no weight at all ("from the applicant's credit profile").
INPUT_WORD_WEIGHT = 0.5
#: A yes/no or who/which question about the rows ("does this developer work remotely?") asks for a prediction.
QUESTION_WEIGHT = 1.0
#: Families that can be part of another one: exploring before modelling, a projection to plot clusters.
SUBORDINATE = {Family.EXPLORATION, Family.REDUCTION}
#: Which family wins a tie, strongest claim first. SUPERVISED wins only when a column to predict is named.
TIE_ORDER = (Family.ANOMALY, Family.CLUSTERING, Family.REDUCTION, Family.EXPLORATION, Family.SUPERVISED)

#: Phrases that make a supervised goal about the future; with a time column that means forecasting.
_FUTURE = re.compile(r"\b(forecast\w*|future|ahead|upcoming|horizon|tomorrow|"
                     r"(?:next|coming|following)\s+(?:\d+\s+|few\s+)?"
                     r"(?:days?|weeks?|months?|quarters?|years?|seasons?|periods?))\b")
#: Words that settle classification against regression outright, whatever the target looks like.
FORCE_CLASSIFICATION = frozenset(stems_of("classify classification classifier categorise categorize binary multiclass"))
FORCE_REGRESSION = frozenset(stems_of("regression regressor regress continuous"))
#: Hints that only break a tie when the target is numeric with few distinct values.
CLASSIFICATION_HINTS = frozenset(stems_of("whether class category which kind label diagnose distinguish grade"))
REGRESSION_HINTS = frozenset(stems_of("how much many amount number quantity level value estimate"))


TASK_PHRASES: tuple[tuple[Family, tuple[str, ...], float], ...] = tuple(
    (family, stems_of(phrase), weight)
    for family, by_weight in TASK_RULES.items()
    for weight, phrases in by_weight.items()
    for phrase in phrases.split(", ")
)

# --------------------------------------------------------------------------------------------- target rules


@dataclass(frozen=True)
class Synonym:
    """Goal words that name a column whose name is different; ``values`` restricts it to columns holding them."""

    goal: frozenset[str]
    column: frozenset[str]
    values: frozenset[str] = frozenset()


#: (goal words, column-name words, values the column must hold). "default" names a column 'Status' only when
#: it holds good/bad; "sell for" names 'Sale_Price'.
SYNONYM_TABLE: tuple[tuple[str, str, str], ...] = (
    ("churn leave quit resign cancel unsubscribe drop terminate attrition defect exit retain retention stay lose lost "
     "walk",
     "churn exited attrition", ""),
    ("buy buyer purchase purchaser", "purchase purchased buy", ""),
    ("price cost worth value expensive cheap sell", "price saleprice cost value medv", ""),
    ("default repay repayment pay creditworthy creditworthiness risk risky bad good loan", "status class default",
     "good bad default paid"),
    ("survive survival die death dead live alive", "survived survive survival dead", ""),
    ("kind breed variety", "species variety", ""),
    ("cultivar variety grape winery producer origin", "cultivar variety", ""),
    ("malignant benign cancer tumour tumor diagnose diagnosis", "diagnosis malignant", ""),
    ("progression progress severity disease", "progression", ""),
    ("strength strong", "strength", ""),
    ("income salary wage earning earnings", "income wage salary earnings", ""),
    ("heavy weigh weight mass", "mass weight", ""),
    ("where origin provenance region", "region origin", ""),
    ("unemployment unemployed jobless", "unemploy unemployment", ""),
    ("spending consumption expenditure", "pce consumption spending", ""),
    ("fuel efficiency mileage consumption", "mpg", ""),
    ("home house value", "medv", ""),
)
SYNONYMS = tuple(
    Synonym(frozenset(stems_of(goal)), frozenset(stems_of(column)), frozenset(stems_of(values)))
    for goal, column, values in SYNONYM_TABLE
)
SYNONYM_TEXTS = tuple(goal for goal, _, _ in SYNONYM_TABLE)
#: Units and filler inside column names ("bill_length_mm", "sepal length (cm)"): never how a user names it.
NAME_NOISE = frozenset(stems_of("cm mm kg g lb lbs km pct usd num of the in per is has"))
#: Values too common to point at one column when a goal mentions them.
COMMON_VALUES = frozenset(stems_of("yes no true false none other others unknown good bad normal typical average "
                                 "high low new old standard regular fair"))


class MatchKind(StrEnum):
    """How a column was found in the goal, best first; the score is how sure that makes us."""

    EXPLICIT = "explicit"
    EXACT = "exact"
    SYNONYM = "synonym"
    DERIVED = "derived"
    ABBREVIATION = "abbreviation"
    ACRONYM = "acronym"
    PARTIAL = "partial"
    CLASSES = "classes"
    VALUE = "value"
    FUZZY = "fuzzy"
    PROFILE = "profile"


MATCH_SCORE = {
    MatchKind.EXPLICIT: 1.0, MatchKind.EXACT: 0.95, MatchKind.SYNONYM: 0.85, MatchKind.DERIVED: 0.85,
    MatchKind.ABBREVIATION: 0.7,
    MatchKind.ACRONYM: 0.7, MatchKind.PARTIAL: 0.65, MatchKind.CLASSES: 0.9, MatchKind.VALUE: 0.6, MatchKind.FUZZY: 0.5,
    MatchKind.PROFILE: 0.45,
}
#: Matches this good name a column outright: enough for a goal that is only a column name, and two of them
#: joined by "and" are two targets.
STRONG_MATCH = MATCH_SCORE[MatchKind.SYNONYM]
#: How much less a partial mention scores when it covers none of the name's other words ('year' for Year_Remod_Add
#: against 'year ... built' for Year_Built).
PARTIAL_SPREAD = 0.1
#: difflib similarity a misspelt word needs to count as a task word or a column name.
FUZZY_CUTOFF = 0.84

#: "target is Sale_Price", "label: species", "Exited as the target", "predict the column 'churn'".
_EXPLICIT_TARGET = (
    re.compile(r"\b(?:target|label|outcome|response|dependent variable|y)(?:\s+(?:column|variable|field))?"
               r"\s*(?:is|=|:|should be|will be)\s*[\"'`]?([\w.()/ -]+?)[\"'`]?\s*(?:[,;.!?]|$)", re.I),
    re.compile(r"[\"'`]?([\w.()/-]+)[\"'`]?\s+(?:column\s+)?as\s+(?:the\s+|my\s+)?(?:target|label|outcome)\b", re.I),
    re.compile(r"\bcolumn\s+[\"'`]([^\"'`]+)[\"'`]", re.I),
)
#: Where the goal starts listing inputs: a column after these is a feature, not the target. "look at" opens the
#: inputs only after the goal has said something else ("who has insurance? look at age and education").
_FEATURE_MARKER = re.compile(r"\b(?:based on|base (?:it|this|that) on|using|from|given|by looking at|according to|"
                             r"as features|with features|considering|taking into account|(?<=\w )look(?:ing)? at)\b")
#: A question about the rows that a prediction answers: yes/no ("does ...?", "was ...?") or who/which.
_QUESTION = re.compile(r"^\s*(?:does|do|did|is|are|was|were|will|would|can|could|has|have|who|which)\b[^?]*\?")


# --------------------------------------------------------------------------------------------- the goal, read once


@dataclass(frozen=True)
class Goal:
    """The goal as the rules see it: its words, their stems (typos fixed), and where the inputs start."""

    words: tuple[str, ...]
    stems: tuple[str, ...]
    features_from: int  # index of the first word after "based on"/"from"/... (len(words) when there is none)
    corrections: tuple[tuple[str, str], ...]
    asides: frozenset[int] = frozenset()  # words of a parenthesised list: examples or classes, not the column asked for
    question: bool = False  # the goal asks a question about the rows that a prediction answers

    def said(self, start: int, end: int) -> str:
        return " ".join(self.words[start:end])


def _vocabulary() -> dict[str, str]:
    """Stem -> word as the rules write it, for every task and synonym word long enough to be misspelt."""
    phrases = [p for by_weight in TASK_RULES.values() for ps in by_weight.values() for p in ps.split(", ")]
    written = [w for text in (*phrases, *SYNONYM_TEXTS) for w in words(text)]
    return {stem(w): w for w in written if len(stem(w)) >= 4}


VOCABULARY = _vocabulary()
#: Stems of the task words: never read as an abbreviated column name ("predict" is no 'pred' column).
TASK_STEMS = frozenset(s for _, phrase, _ in TASK_PHRASES for s in phrase)


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
    different word, not a typo."""
    close = [v for v in VOCABULARY if similar(s, v) and not (s.startswith(v) or v.startswith(s))]
    return max(close, key=lambda v: (difflib.SequenceMatcher(None, s, v).ratio(), v), default=None)


def read_goal(text: str, profile: DatasetProfile) -> Goal:
    """Split the goal into words and stems, fixing misspelt task words ("predcit", "clasify") but no column names."""
    known = {*VOCABULARY, *STOPWORDS, *GENERIC_NOUNS, *(s for name in column_names(profile) for s in name.stems)}
    tokens, asides = _tokens_and_asides(text)
    stems: list[str] = []
    corrections: list[tuple[str, str]] = []
    for word in tokens:
        s = stem(word)
        fix = _spelling_fix(s) if len(s) >= 5 and s.isalpha() and s not in known else None
        if fix:
            corrections.append((word, VOCABULARY[fix]))
        stems.append(fix or s)
    marker = _FEATURE_MARKER.search(" ".join(tokens))
    features_from = len(" ".join(tokens)[: marker.start()].split()) if marker else len(tokens)
    question = any(_QUESTION.match(sentence) for sentence in re.split(r"(?<=[.!?])\s+", text))
    return Goal(tuple(tokens), tuple(stems), features_from, tuple(corrections), asides, question)


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
    n = len(phrase)
    return [i for i in range(len(stems) - n + 1) if stems[i : i + n] == phrase]


def _negated(stems: tuple[str, ...], at: int, window: int = 3) -> bool:
    return any(s in NEGATIONS for s in stems[max(0, at - window) : at])


def verb_positions(goal: Goal) -> list[int]:
    """Where the goal asks for a prediction: the target is usually the column named right after these words."""
    return sorted(at for family, phrase, _ in TASK_PHRASES if family is Family.SUPERVISED
                  for at in find_phrase(goal.stems, phrase))


# --------------------------------------------------------------------------------------------- columns named


@dataclass(frozen=True)
class ColumnName:
    column: ColumnProfile
    stems: tuple[str, ...]  # content stems of the name ("Sale_Price" -> sale, pric)
    spelled: tuple[str, ...]  # the same words as written (sale, price)
    joined: str  # the name's letters run together ("saleprice")

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
    """'crim' for crime, 'pop' for population (prefixes); 'hwy' for highway, 'avg' for average (consonant skeletons).

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
        elif n > 1 and all(c[0] == g[0] or _abbreviates(c, g) for c, g in pairs):  # "overall condition": Overall_Cond
            yield Match(column, MatchKind.ABBREVIATION, at, at + n, goal.said(at, at + n))
    for at, (s, word) in enumerate(zip(stems, goal.words, strict=True)):
        if s in STOPWORDS:
            continue
        if len(name.joined) >= 4 and s == stem(name.joined):
            yield Match(column, MatchKind.EXACT, at, at + 1, word)
        elif len(name.spelled) == 1 and _derived(s, stem(name.joined)):  # "smoker" for smoke, "lefty" for left
            yield Match(column, MatchKind.DERIVED, at, at + 1, word)
        elif joined := _run_together(name, goal, at):  # "low birth weight": lowbirthweight
            yield Match(column, MatchKind.EXACT, at, joined, goal.said(at, joined))
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


#: Endings that make a word of a name without changing what it is about: who does it, of that kind.
DERIVATION_ENDINGS = frozenset({"er", "r", "or", "ist", "i", "ie", "ier"})


def _derived(word: str, name: str) -> bool:
    """One stem is the other plus a derivational ending ("smoker"/"smoke", "lefty"/"left"), both at least 4 letters."""
    shorter, longer = sorted((word, name), key=len)
    return len(shorter) >= 4 and longer.startswith(shorter) and longer[len(shorter):] in DERIVATION_ENDINGS


def _run_together(name: ColumnName, goal: Goal, at: int) -> int | None:
    """Where goal words starting at ``at`` spell a one-word name, as written or by their stems, small words between
    allowed: "low birth weight" for lowbirthweight, "signs up for the newsletter" for signupnewsletter."""
    if len(name.spelled) != 1 or len(name.joined) < 6:
        return None
    rest, used = name.joined, 0
    for end in range(at, min(at + RUN_TOGETHER_WORDS, len(goal.words))):
        piece = next((p for p in (goal.words[end], goal.stems[end]) if rest.startswith(p)), None)
        if piece:
            rest, used = rest[len(piece):], used + 1
            if not rest:
                return end + 1 if used >= 2 else None
        elif end == at or goal.stems[end] not in STOPWORDS:
            return None
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


def _value_matches(profile: DatasetProfile, goal: Goal) -> Iterable[Match]:
    """A goal word that is a class of exactly one categorical column ("is the tumour malignant?"); two or more of
    one column's classes, short codes included, name it as strongly as a synonym ("well (WS) or poorly (PS)")."""
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
        if len(owners.get(s, ())) == 1:
            yield Match(next(iter(owners[s])), MatchKind.VALUE, at, at + 1, goal.words[at])


def _fuzzy_matches(names: list[ColumnName], goal: Goal) -> Iterable[Match]:
    """Last resort for misspelt names ("survivd", "prcie")."""
    for at, (word, s) in enumerate(zip(goal.words, goal.stems, strict=True)):
        if len(word) < 4 or s in STOPWORDS or s in GENERIC_NOUNS or s in VOCABULARY:
            continue
        for name in names:
            spelled = [w for w in (*words(name.column.name), name.joined) if len(w) >= 4]
            if any(similar(word, w) for w in spelled):
                yield Match(name.column.name, MatchKind.FUZZY, at, at + 1, word)


def _objects_of_synonyms(matches: list[Match], stems: tuple[str, ...]) -> set[Match]:
    """Columns named as the object of a synonym ("cancel their contract", "leave the company"): not targets."""
    synonyms = [m for m in matches if m.kind is MatchKind.SYNONYM]
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


def column_matches(goal: Goal, profile: DatasetProfile) -> list[Match]:
    """Every mention of a column in the goal, by name, synonym, abbreviation or class value; fuzzy only if none."""
    names = column_names(profile)
    found = [m for name in names for m in (*_span_matches(name, goal), *_synonym_matches(name, goal))]
    found = [m for m in found if m.start not in goal.asides]  # "(red-tailed, sharp-shinned)" lists classes
    found += _value_matches(profile, goal)
    dropped = _objects_of_synonyms(found, goal.stems) | _nested(found)
    return [m for m in found if m not in dropped] or list(_fuzzy_matches(names, goal))


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


# --------------------------------------------------------------------------------------------- task family


def family_scores(goal: Goal, masked: set[int], named_target: bool = False) -> dict[Family, list[tuple[str, float]]]:
    """Each family's matched phrases with their weights.

    Words inside a column's name or a list of its classes, or after a negation, don't count; words among the inputs
    ("from its fatty acid profile") count half, or nothing once a column to predict is named before them, as they
    describe the features rather than the task. A question about the rows counts for a prediction.
    """
    found: dict[Family, list[tuple[str, float]]] = {}
    input_weight = 0.0 if named_target else INPUT_WORD_WEIGHT
    for family, phrase, weight in TASK_PHRASES:
        hits = [at for at in find_phrase(goal.stems, phrase)
                if not masked & set(range(at, at + len(phrase))) and not _negated(goal.stems, at)]
        if hits:
            in_inputs = min(hits) >= goal.features_from
            said = goal.said(min(hits), min(hits) + len(phrase))
            found.setdefault(family, []).append((said, weight * (input_weight if in_inputs else 1)))
    if goal.question:
        found.setdefault(Family.SUPERVISED, []).append(("a question about the rows", QUESTION_WEIGHT))
    anomaly = found.get(Family.ANOMALY, [])
    if Family.EXPLORATION in found and anomaly and all(stem(said) == OUTLIER_STEM for said, _ in anomaly):
        found[Family.EXPLORATION] += found.pop(Family.ANOMALY)  # outliers listed among analyses are one more analysis
    return {family: hits for family, hits in found.items() if any(weight for _, weight in hits)}


def choose_family(scores: dict[Family, list[tuple[str, float]]], named_target: bool, goal: str,
                  profile: DatasetProfile) -> tuple[Family, float]:
    """The family the goal asks for, and how sure (0-1). Raises AmbiguousGoal on no signal or a real conflict."""
    totals = {family: sum(weight for _, weight in hits) for family, hits in scores.items()}
    if named_target:
        totals[Family.SUPERVISED] = totals.get(Family.SUPERVISED, 0.0) + NAMED_COLUMN_WEIGHT
    if not totals or max(totals.values()) < MIN_TASK_SCORE:
        raise AmbiguousGoal(vague_goal_question(goal, profile))
    ranked = sorted(totals, key=lambda f: (-totals[f], _tie_rank(f, named_target)))
    best = ranked[0]
    runner_up = next((f for f in ranked[1:] if f not in SUBORDINATE and best not in SUBORDINATE), None)
    if runner_up and totals[runner_up] >= 2 and totals[best] - totals[runner_up] < 1:
        raise AmbiguousGoal(
            f"The goal asks for two different things: to {best.value} and to {runner_up.value}. Which one do you "
            f"want? dagsmith builds one pipeline per goal."
        )
    second = max((t for f, t in totals.items() if f != best), default=0.0)
    confidence = min(1.0, 0.5 + totals[best] / 8) - 0.3 * min(1.0, second / totals[best])
    return best, max(0.1, confidence)


def _tie_rank(family: Family, named_target: bool) -> int:
    return -1 if family is Family.SUPERVISED and named_target else TIE_ORDER.index(family)


def vague_goal_question(goal: str, profile: DatasetProfile, why: str = "") -> str:
    examples = [c.column for c in profile.target_candidates[:3]] or profile.column_names[:3]
    shown = f"'{goal.strip()}'" if goal.strip() else "an empty goal"
    return (
        f"I could not tell what you want from {shown}.{why} Do you want to predict a column (which one? e.g. "
        f"{', '.join(examples)}), group similar rows, reduce the columns to a few components, find unusual rows, "
        f"or explore the data?"
    )


# --------------------------------------------------------------------------------------------- target


@dataclass(frozen=True)
class TargetChoice:
    column: str | None
    confidence: float
    reason: str


def _chunk(stems: tuple[str, ...], at: int, end: int, verbs: list[int]) -> tuple[int, int]:
    """The run of content words around a mention ("credit card balance"): one noun phrase."""
    def inside(i: int) -> bool:
        return 0 <= i < len(stems) and stems[i] not in STOPWORDS and i not in verbs
    while inside(at - 1):
        at -= 1
    while inside(end):
        end += 1
    return at, end


def _rank_key(match: Match, stems: tuple[str, ...], verbs: list[int]) -> tuple[float, int, int]:
    """Best match first; then the noun phrase nearest after a task verb (before it costs 2); then its head word."""
    start, end = _chunk(stems, match.start, match.end, verbs)
    distance = min((start - v if start > v else v - end + 2 for v in verbs), default=start)
    return -match.score, distance, -match.end


def _two_targets(first: Match, second: Match, stems: tuple[str, ...]) -> bool:
    """Two columns named as strongly and joined only by "and"/"or"/commas: the goal asks for both."""
    if min(first.score, second.score) < STRONG_MATCH:
        return False
    left, right = sorted((first, second), key=lambda m: m.start)
    between = set(stems[left.end : right.start])
    return left.end <= right.start and between <= CONJUNCTIONS | QUANTITY_WORDS and bool(between & JOINING_WORDS)


def choose_target(goal: Goal, matches: list[Match], verbs: list[int], profile: DatasetProfile) -> TargetChoice:
    """The column the goal names (nearest a task verb, inputs after "based on"/"from" aside), else the profile's.

    A column also named among the inputs ("... from its sales volume") is one the user predicts from, not the target;
    an identifier the goal's subject happens to name ("will the *customer* sign up ..." over `customer`) is who the
    rows are, not what to predict, unless nothing else is named.
    """
    inputs = {m.column for m in matches if m.start >= goal.features_from}
    # Inputs listed after the target's own words ("visits - predict them from age and income") are never the target;
    # a goal that opens with its inputs ("from these readings, predict ...") names its target among them.
    zone = [m for m in matches if m.start < goal.features_from] or (matches if goal.features_from == 0 else [])
    zone = [m for m in zone if m.column not in inputs] or zone
    zone = [m for m in zone if _predictable(profile.column(m.column))] or zone
    if zone:
        best = _named_target(goal, zone, verbs, profile)
        return TargetChoice(best.column, best.score, target_reason(best))
    named = named_but_absent(goal, verbs)
    if named:
        only = [c.name for c in profile.columns if c.name not in inputs and c.name != profile.time_column
                and _predictable(c) and c.unique > 1]
        if len(only) == 1:  # words can name nothing else ("forecast the wine sales" over `time` and `value`)
            return TargetChoice(only[0], 0.6, f"the goal names '{named}' as what to predict; no column is called "
                                              f"that, and '{only[0]}' is the only column there is to predict")
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


def _predictable(column: ColumnProfile | None) -> bool:
    return column is None or column.semantic_type not in UNPREDICTABLE


def _named_target(goal: Goal, zone: list[Match], verbs: list[int], profile: DatasetProfile) -> Match:
    """The best-placed mention; an exact tie goes to the profile's favourite, or back to the user as a question."""
    favourite = profile.target_candidates[0].column if profile.target_candidates else None
    best: dict[str, Match] = {}
    for m in sorted(zone, key=lambda m: (_rank_key(m, goal.stems, verbs), m.column != favourite)):
        best.setdefault(m.column, m)
    first, *rivals = best.values()
    for rival in rivals:
        tied = _rank_key(rival, goal.stems, verbs) == _rank_key(first, goal.stems, verbs) and first.column != favourite
        if tied or _two_targets(first, rival, goal.stems):
            raise AmbiguousGoal(
                f"The goal could mean two columns to predict: '{first.column}' or '{rival.column}'. Which one "
                f"should the model predict? One pipeline predicts one column; for both, plan one goal per column "
                f"('predict {first.column}', then 'predict {rival.column}')."
            )
    return first


def target_reason(match: Match) -> str:
    how = {
        MatchKind.EXPLICIT: "the goal designates it explicitly",
        MatchKind.EXACT: "the goal names the column",
        MatchKind.SYNONYM: "a synonym of its name",
        MatchKind.DERIVED: "a word formed from its name",
        MatchKind.ABBREVIATION: "its name abbreviates",
        MatchKind.ACRONYM: "its name is the initials of",
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
    for at in range(verbs[0] + 1, min(goal.features_from, len(goal.stems))):
        s = goal.stems[at]
        if s in SKIPPABLE or s in GENERIC_NOUNS or s in VOCABULARY:
            continue
        return goal.words[at] if s.isalpha() and s not in STOPWORDS and len(s) >= 3 else None
    return None


# --------------------------------------------------------------------------------------------- task type

_NUMERIC_DTYPE = re.compile(r"^(u?int|float|Int|UInt|Float)\d*")
CLASS_TYPES = {SemanticType.CATEGORICAL, SemanticType.BOOLEAN, SemanticType.TEXT}
CATEGORY_TYPES = {SemanticType.CATEGORICAL, SemanticType.BOOLEAN}
#: Columns no model learns from as they are: identifiers, free text and contact details (dates are left to the
#: supervised pipeline, which reads them as features).
NEVER_FEATURES = NOT_FEATURES - {SemanticType.DATETIME}
#: Columns no model predicts: one value per row, or free-form text.
UNPREDICTABLE = NEVER_FEATURES | {SemanticType.POSTAL_CODE}
KIND_NAMES = {
    SemanticType.ID: "an identifier", SemanticType.TEXT: "free text",
    SemanticType.EMAIL: "email addresses", SemanticType.PHONE: "phone numbers", SemanticType.URL: "URLs",
    SemanticType.POSTAL_CODE: "postal codes", SemanticType.DATETIME: "dates",
}
#: A numeric target with at most this many values can be classes when the goal hints so.
FEW_VALUES = 10

FAMILY_TASK = {
    Family.CLUSTERING: TaskType.CLUSTERING,
    Family.REDUCTION: TaskType.DIMENSIONALITY_REDUCTION,
    Family.ANOMALY: TaskType.ANOMALY_DETECTION,
    Family.EXPLORATION: TaskType.EXPLORATORY_ANALYSIS,
}


def is_numeric(column: ColumnProfile) -> bool:
    return bool(_NUMERIC_DTYPE.match(column.dtype)) and column.semantic_type is not SemanticType.DATETIME


def holds_numbers(column: ColumnProfile) -> bool:
    """Numbers, stored as such or as text with a few stray words ('n/a', 'call us'), which a pipeline reads as
    missing: a price column with three such words is still a price, not 350 classes."""
    return is_numeric(column) or (column.semantic_type is SemanticType.NUMERIC and column.mean is not None)


def stray(column: ColumnProfile) -> str:
    if not column.not_numbers:
        return ""
    return f" ({counted(column.not_numbers, 'value')} in it are not numbers and are read as missing)"


def _classes(column: ColumnProfile) -> TaskType:
    return TaskType.BINARY_CLASSIFICATION if column.unique <= 2 else TaskType.MULTICLASS_CLASSIFICATION


def supervised_task(goal: Goal, target: ColumnProfile | None, profile: DatasetProfile) -> tuple[TaskType, str]:
    """Classification or regression from the target's type; goal words decide only where the type cannot. Words
    inside a model's name ("logistic regression") force nothing; the task the name implies is a hint."""
    text = " ".join(goal.words)
    named = mentions(text)
    inside = {text[: m.start].count(" ") + i for m in named for i in range(m.said.count(" ") + 1)}
    said = {s for i, s in enumerate(goal.stems) if i not in inside}
    hinted = {m.task for m in named if m.task}
    forced = ("classification" if said & FORCE_CLASSIFICATION else "regression" if said & FORCE_REGRESSION else None)
    if target is None:
        task = TaskType.REGRESSION if "regression" in {forced, *hinted} - {"classification"} else \
            TaskType.BINARY_CLASSIFICATION
        return task, "no target column to decide from; read from the goal's words only"
    shape = f"'{target.name}' has " + (f"{target.unique} distinct values" if target.unique != 1 else "a single value")
    if forced == "regression":
        return TaskType.REGRESSION, f"the goal asks for regression ({shape})"
    if forced == "classification" or not holds_numbers(target):
        return _classes(target), f"{shape} ({class_list(target)}), so it is predicted as classes"
    task, why = _numeric_task(target, said, hinted, profile)
    return task, f"{shape}{why}{stray(target)}"


def _numeric_task(target: ColumnProfile, said: set[str], hinted: set[str],
                  profile: DatasetProfile) -> tuple[TaskType, str]:
    if target.unique <= 2:
        return TaskType.BINARY_CLASSIFICATION, ": a numeric yes/no"
    if target.unique <= FEW_VALUES:
        votes = (len(said & CLASSIFICATION_HINTS) - len(said & REGRESSION_HINTS)
                 + ("classification" in hinted) - ("regression" in hinted))
        suggested = next((c.suggested_task for c in profile.target_candidates if c.column == target.name), None)
        if votes > 0 or (votes == 0 and suggested.classification):
            return TaskType.MULTICLASS_CLASSIFICATION, ", few enough to be classes, as the goal or profile says"
        return TaskType.REGRESSION, ", numeric and ordered, so its value is predicted"
    return TaskType.REGRESSION, ": a continuous number, so its value is predicted"


def class_list(column: ColumnProfile, limit: int = 4) -> str:
    values = [v.value for v in column.top_values[:limit]]
    return ", ".join(values) + (", ..." if column.unique > limit else "")


# --------------------------------------------------------------------------------------------- constraints

_NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                 "eight": 8, "nine": 9, "ten": 10, "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40,
                 "fifty": 50, "sixty": 60, "ninety": 90, "couple": 2, "few": 3}
_NUMBER = r"(\d+(?:\.\d+)?|" + "|".join(_NUMBER_WORDS) + r")"
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600}  # by the unit's first letter; days are a forecast horizon, not a budget
_TIME = re.compile(
    r"\b(?:in|within|under|below|less than|at most|max|maximum|no more than|no longer than|budget of|limit of|"
    r"than|only|just)\s+(?:about\s+)?(half\s+an?|" + _NUMBER[1:-1] + r")\s+"
    r"(s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?)\b"
)
_QUICK = re.compile(r"\b(quick|quickly|fast|asap|hurry|rapidly|in a rush|right away|speedy)\b")
QUICK_BUDGET_SECONDS = 300
_INTERPRETABLE = re.compile(
    r"\b(explainable|explainability|interpretable|interpretability|interpret|explain|transparent|transparency|"
    r"white box|glass box|auditable|understandable|human readable|simple rules|regulators?|compliance)\b"
)
_BLACK_BOX = re.compile(r"\bblack ?box(?:es)?\b")
#: Model families a goal can rule out ("no neural nets", "without deep learning", "avoid SVMs").
_MAX_FEATURES = re.compile(
    r"\b(at most|no more than|max|maximum|up to|only|just|limit(?:ed)? to|top|fewer than|less than|under|"
    r"a maximum of)\s+" + _NUMBER + r"\s+(?:\w+\s+)?(?:features?|variables?|columns?|predictors?|inputs?|attributes?)\b"
)
#: Metric names as a goal says them -> the name evaluators report.
METRICS = {
    "recall": r"\brecall\b|\bsensitivity\b|true positive rate|(?:catch|find) (?:as many|all|most)|miss as few",
    "precision": r"\bprecision\b|false alarms?|false positives?",
    "f1": r"\bf 1\b|\bf score\b|\bf measure\b",
    "roc_auc": r"\bauc\b|\broc\b",
    "balanced_accuracy": r"balanced accuracy",
    "accuracy": r"(?<!balanced )\baccuracy\b",
    "log_loss": r"\blog ?loss\b|cross entropy",
    "rmse": r"\brmse\b|root mean squared? error",
    "mae": r"\bmae\b|mean absolute error",
    "r2": r"\br 2\b|r squared|coefficient of determination",
    "mape": r"\bmape\b|percentage error",
    "silhouette": r"\bsilhouette\b",
}
_CLASSIFICATION_METRICS = {"recall", "precision", "f1", "roc_auc", "balanced_accuracy", "accuracy", "log_loss"}
_REGRESSION_METRICS = {"rmse", "mae", "r2", "mape"}
#: Which metrics make sense for which task (a goal asking for recall on a regression gets a warning).
METRICS_FOR: dict[TaskType, set[str]] = {
    TaskType.BINARY_CLASSIFICATION: _CLASSIFICATION_METRICS,
    TaskType.MULTICLASS_CLASSIFICATION: _CLASSIFICATION_METRICS,
    TaskType.REGRESSION: _REGRESSION_METRICS,
    TaskType.TIME_SERIES_FORECASTING: _REGRESSION_METRICS,
    TaskType.CLUSTERING: {"silhouette"},
}
_N_CLUSTERS = re.compile(
    r"\b" + _NUMBER + r"\s+(?:\w+\s+)?(?:clusters?|groups?|segments?|personas?|cohorts?)\b|\bk (\d+)\b")
_N_COMPONENTS = re.compile(r"\b" + _NUMBER + r"\s*(?:d|dimensions?|dims?|components?|axes)\b")
#: a share of the rows: "the top 2%", "about 1 percent of the transactions", "0.5 % most unusual"
_SHARE = re.compile(r"\b(\d+(?:\.\d+)?)\s*(?:%|percent\b|per cent\b)")
_DEDUPLICATE = re.compile(r"\b(de ?dup\w*|duplicat\w*|repeated (?:rows|records|entries))\b")
_VISUALISE = re.compile(r"\b(visuali[sz]\w*|plots?|plotting|charts?|graphs?|scatter|show me|picture)\b")


def _number(said: str) -> float:
    return float(said) if said[0].isdigit() else float(_NUMBER_WORDS[said])


#: What each analysis of an exploration is called in goals (the names are the exploration service's ``analyses``).
ANALYSIS_WORDS = {
    "statistics": re.compile(r"\b(statistics?|stats|averages?|means?|medians?|(?:value )?ranges?|minimum|maximum|"
                             r"typical values?)\b"),  # not 'summarise' or 'describe': those ask for everything
    "distributions": re.compile(r"\b(distributions?|distributed|histograms?|spread|skew\w*)\b"),
    "missingness": re.compile(r"\b(missing\w*|gaps|nulls?|nan|completeness|empty values)\b"),
    "correlations": re.compile(r"\b(correlat\w*|relationships?|relate[sd]?|relating|associations?|"
                               r"go together|move together)\b"),
    "outliers": re.compile(r"\b(outliers?|extreme values?|anomal\w*|unusual values?)\b"),
}


def parse_constraints(goal: str, task: TaskType) -> list[Constraint]:
    """Limits the goal states, each with the words it was read from."""
    text = " ".join(words(goal))
    return [*_time_budget(text), *_interpretability(text), *_model_requests(text), *_max_features(text),
            *_metrics(text), *_shape_requests(text, task), *_anomaly_share(goal.lower(), task),
            *_deduplication_request(text), *_analyses(text, task)]


def _anomaly_share(goal: str, task: TaskType) -> list[Constraint]:
    """The share of rows to flag, read from the goal as written (word splitting drops the percent sign)."""
    share = _SHARE.search(goal)
    if not share or task is not TaskType.ANOMALY_DETECTION or not 0 < float(share.group(1)) <= 50:
        return []
    return [Constraint(kind=ConstraintKind.ANOMALY_FRACTION, value=float(share.group(1)) / 100,
                       reason=f"the goal says '{share.group(0)}'")]


def _time_budget(text: str) -> list[Constraint]:
    found = _TIME.search(text)
    if found:
        amount, unit = found.group(1), found.group(2)
        value = 0.5 if amount.startswith("half") else _number(amount)
        seconds = int(value * _UNIT_SECONDS[unit[0]])
        return [Constraint(kind=ConstraintKind.TIME_BUDGET, value=seconds, reason=f"the goal says '{found.group(0)}'")]
    quick = _QUICK.search(text)
    if quick:
        return [Constraint(kind=ConstraintKind.TIME_BUDGET, value=QUICK_BUDGET_SECONDS,
                           reason=f"'{quick.group(0)}' read as a {QUICK_BUDGET_SECONDS // 60}-minute budget")]
    return []


def _ruled_out(text: str, at: int) -> bool:
    """Whether a negation governs the words at ``at``: "no neural nets", "without deep learning or boosting", but
    not "no neural nets and random forests are fine" (a new clause starts at "and")."""
    before = words(text[:at])
    clause = before[max((i + 1 for i, w in enumerate(before) if w in CLAUSE_BREAKS), default=0):]
    return any(stem(w) in NEGATIONS for w in clause[-4:])


def _interpretability(text: str) -> list[Constraint]:
    black_box = _BLACK_BOX.search(text)
    if black_box and _ruled_out(text, black_box.start()):
        return [Constraint(kind=ConstraintKind.INTERPRETABLE, value=True,
                           reason=f"the goal rules out black boxes ('{black_box.group(0)}')")]
    said = next((m for m in _INTERPRETABLE.finditer(text) if not _ruled_out(text, m.start())), None)
    if not said:
        return []
    return [Constraint(kind=ConstraintKind.INTERPRETABLE, value=True, reason=f"the goal says '{said.group(0)}'")]


def _model_requests(text: str) -> list[Constraint]:
    """Models the goal rules out (their whole family) and the ones it asks for, each read from the names."""
    excluded: dict[str, str] = {}
    requested: dict[str, str] = {}
    for mention in mentions(text):
        if _ruled_out(text, mention.start):
            excluded.setdefault(mention.name.family, mention.said)
        else:
            requested.setdefault(mention.label, mention.said)
    found = [Constraint(kind=ConstraintKind.EXCLUDE_FAMILY, value=family, reason=f"the goal rules out '{said}'")
             for family, said in excluded.items()]
    if requested:
        said = ", ".join(f"'{s}'" for s in requested.values())
        found.append(Constraint(kind=ConstraintKind.MODEL, value=list(requested), reason=f"the goal asks for {said}"))
    return found


def _max_features(text: str) -> list[Constraint]:
    found = _MAX_FEATURES.search(text)
    if not found:
        return []
    limit = int(_number(found.group(2))) - (1 if found.group(1) in {"fewer than", "less than"} else 0)
    return [Constraint(kind=ConstraintKind.MAX_FEATURES, value=limit, reason=f"the goal says '{found.group(0)}'")]


def _metrics(text: str) -> list[Constraint]:
    hits = sorted((m.start(), name, m.group(0)) for name, pattern in METRICS.items() if (m := re.search(pattern, text)))
    return [Constraint(kind=ConstraintKind.METRIC, value=name, reason=f"the goal mentions '{said}'")
            for _, name, said in hits]


def _shape_requests(text: str, task: TaskType) -> list[Constraint]:
    found = []
    clusters = _N_CLUSTERS.search(text)
    if clusters and task is TaskType.CLUSTERING:
        count = int(_number(clusters.group(1) or clusters.group(2)))
        found.append(Constraint(kind=ConstraintKind.N_CLUSTERS, value=count,
                                reason=f"the goal says '{clusters.group(0)}'"))
    components = _N_COMPONENTS.search(text)
    if components and task in {TaskType.DIMENSIONALITY_REDUCTION, TaskType.CLUSTERING}:
        found.append(Constraint(kind=ConstraintKind.N_COMPONENTS, value=int(_number(components.group(1))),
                                reason=f"the goal says '{components.group(0)}'"))
    visual = _VISUALISE.search(text)
    if visual:
        found.append(Constraint(kind=ConstraintKind.VISUALISE, value=True, reason=f"the goal says '{visual.group(0)}'"))
    return found


def _analyses(text: str, task: TaskType) -> list[Constraint]:
    """The analyses an exploratory goal names ("distributions, correlations and outliers"); none named: all run."""
    if task is not TaskType.EXPLORATORY_ANALYSIS:
        return []
    named = {name: found.group(0) for name, pattern in ANALYSIS_WORDS.items() if (found := pattern.search(text))}
    if not named:
        return []
    said = ", ".join(f"'{word}'" for word in named.values())
    return [Constraint(kind=ConstraintKind.ANALYSES, value=list(named), reason=f"the goal asks for {said}")]


def _deduplication_request(text: str) -> list[Constraint]:
    said = next((m for m in _DEDUPLICATE.finditer(text) if not _ruled_out(text, m.start())), None)
    if not said:
        return []
    return [Constraint(kind=ConstraintKind.DEDUPLICATE, value=True, reason=f"the goal says '{said.group(0)}'")]


# --------------------------------------------------------------------------------------------- stages

_SUPERVISED_BASE = {
    Stage.LOADING: "reads the dataset",
    Stage.VALIDATION: "checks the table and the target before anything is learnt",
    Stage.SPLITTING: "holds out a test set so the evaluation is honest",
    Stage.MODELLING: "learns to predict the target",
    Stage.EVALUATION: "measures the model on the held-out rows",
    Stage.EXPLANATION: "names what drives the predictions, measured on the held-out rows",
}
#: The stages each task cannot do without, and why. Stages the data calls for are added by STAGE_RULES.
BASE_STAGES: dict[TaskType, dict[Stage, str]] = {
    TaskType.BINARY_CLASSIFICATION: _SUPERVISED_BASE,
    TaskType.MULTICLASS_CLASSIFICATION: _SUPERVISED_BASE,
    TaskType.REGRESSION: _SUPERVISED_BASE,
    TaskType.TIME_SERIES_FORECASTING: {
        **_SUPERVISED_BASE,
        Stage.SPLITTING: "a time-based split holds out the latest rows, so the model never sees the future",
        Stage.FEATURE_ENGINEERING: "turns the dates into features (year, month, day of week)",
    },
    TaskType.CLUSTERING: {
        Stage.LOADING: "reads the dataset",
        Stage.VALIDATION: "checks the table before grouping",
        Stage.SCALING: "distances need features on one scale",
        Stage.CLUSTERING: "groups similar rows",
        Stage.EVALUATION: "measures how well separated the groups are",
    },
    TaskType.DIMENSIONALITY_REDUCTION: {
        Stage.LOADING: "reads the dataset",
        Stage.VALIDATION: "checks the table before projecting it",
        Stage.SCALING: "components need features on one scale",
        Stage.DIMENSIONALITY_REDUCTION: "replaces the columns with a few components",
    },
    TaskType.ANOMALY_DETECTION: {
        Stage.LOADING: "reads the dataset",
        Stage.VALIDATION: "checks the table before scoring rows",
        Stage.ANOMALY_DETECTION: "scores every row and flags the unusual ones",
    },
    TaskType.EXPLORATORY_ANALYSIS: {
        Stage.LOADING: "reads the dataset",
        Stage.EDA: "describes every column: counts, gaps, distributions, correlations",
    },
}
#: Optional for every task: a picture and a written report of what was done.
_ALWAYS_OPTIONAL = {Stage.VISUALISATION: "plots of the data and the results",
                    Stage.REPORTING: "a written summary of the pipeline and its metrics"}
_EXTRA_OPTIONAL: dict[TaskType, dict[Stage, str]] = {
    TaskType.CLUSTERING: {Stage.DIMENSIONALITY_REDUCTION: "a 2-D projection makes the groups visible"},
    TaskType.ANOMALY_DETECTION: {Stage.EDA: "a description of the data puts the flagged rows in context",
                                 Stage.SCALING: "distance-based detectors need one scale"},
}

_MODEL_TASKS = set(TaskType) - {TaskType.EXPLORATORY_ANALYSIS}


@dataclass(frozen=True)
class DataView:
    """What the stage rules look at: the profile, split into the target and the features."""

    profile: DatasetProfile
    task: TaskType
    target: ColumnProfile | None
    features: list[ColumnProfile]
    constraints: list[Constraint]


#: (stage, required, reason); required None: the data was checked and the stage is left out, the reason says why.
StageDecision = tuple[Stage, bool | None, str]
StageRule = Callable[[DataView], StageDecision | None]


def percent(ratio: float) -> str:
    return "<0.1%" if 0 < ratio < 0.001 else f"{ratio:.1%}" if ratio < 0.01 else f"{ratio:.0%}"


def counted(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def shortlist(names: list[str], limit: int = 4) -> str:
    return ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")


def _imputation(view: DataView) -> StageDecision | None:
    gaps = sorted((c for c in view.features if c.missing), key=lambda c: -c.missing_ratio)
    target_gaps = view.target.missing + view.target.not_numbers if view.target and view.task.supervised \
        else 0
    if not gaps and not target_gaps:
        return None
    parts = []
    if gaps:
        worst = shortlist([f"{c.name} {percent(c.missing_ratio)}" for c in gaps], 3)
        parts.append(f"{counted(len(gaps), 'feature column')} with missing values ({worst})")
    if target_gaps:
        why = " (missing, or not a number)" if view.target.not_numbers else ""
        parts.append(f"{counted(target_gaps, 'row')} without a target{why} must be dropped")
    return Stage.IMPUTATION, True, "; ".join(parts)


def _encoding(view: DataView) -> StageDecision | None:
    categories = [c.name for c in view.features if not is_numeric(c) and c.semantic_type in CATEGORY_TYPES]
    if not categories:
        return None
    return (Stage.ENCODING, True,
            f"{counted(len(categories), 'categorical feature')} ({shortlist(categories)}) to numbers")


def _column_filtering(view: DataView) -> StageDecision | None:
    unusable = [c.name for c in view.profile.columns if c.semantic_type in NEVER_FEATURES and c is not view.target]
    constant = [c.name for c in view.features if c.unique <= 1]
    what = [f"ids or free text ({shortlist(unusable)})"] if unusable else []
    what += [f"constant ({shortlist(constant)})"] if constant else []
    return (Stage.COLUMN_FILTERING, True, "drops columns no model can use: " + "; ".join(what)) if what else None


#: Repeated rows are copies when at least this share as many of them stand alone (no other row differs from them in
#: a single column) as of the rows that do not repeat; chance repeats rows where rows crowd, far less often alone.
COPIES_ALONE_SHARE = 0.5


def _deduplication(view: DataView) -> StageDecision | None:
    """Deduplicate records entered twice (a repeated id, or copies as alone as any other row), never rows that
    coincide by chance (survey answers, a plan price every new customer pays): those are real observations.
    A goal asking for it gets it."""
    asked = next((c for c in view.constraints if c.kind is ConstraintKind.DEDUPLICATE), None)
    evidence = _repeats(view.profile)
    if asked:
        return Stage.DEDUPLICATION, True, f"asked for: {asked.reason}" + (f"; {evidence[1]}" if evidence else "")
    if evidence is None:
        return None
    copies, why = evidence
    return Stage.DEDUPLICATION, False if copies else None, why


def _repeats(profile: DatasetProfile) -> tuple[bool, str] | None:
    """(whether the repeats are copies, why), or None when no row and no record id repeats."""
    ids = [f"{n} in '{name}'" for name, n in repeated_ids(profile).items()]
    if ids:
        return True, f"repeated record ids ({shortlist(ids)}): the same record entered more than once"
    found = profile.repeated_rows
    if found is None:
        return None
    alone, usual = found.isolated / found.rows, found.isolated_share
    copies = found.isolated > 0 and alone >= COPIES_ALONE_SHARE * usual
    what = f"{counted(found.rows, 'repeated row')} ({percent(found.rows / max(found.checked_rows, 1))})"
    shares = (f"{percent(alone) if found.isolated else 'none'} of them stand alone (no other row differs from them "
              f"in a single column), against {percent(usual)} of the other rows")
    if copies:
        return True, f"{what}: {shares}, so they are copies, not coincidences"
    return False, (f"{what}, but {shares}: they sit where rows crowd and coincide by chance, so removing them "
                   f"would drop real observations")


def _type_conversion(view: DataView) -> StageDecision | None:
    stored = [c.name for c in view.profile.columns
              if not is_numeric(c) and c.semantic_type in {SemanticType.NUMERIC, SemanticType.DATETIME}]
    if not stored:
        return None
    if view.target and view.target.name in stored and not view.task.classification:
        return (Stage.TYPE_CONVERSION, True,
                f"the target {view.target.name} is numbers stored as text{stray(view.target)}")
    return Stage.TYPE_CONVERSION, False, f"{shortlist(stored)} stored as text"


def _continuous(view: DataView) -> list[ColumnProfile]:
    return [c for c in view.features if is_numeric(c) and c.unique > 2]


def _outlier_handling(view: DataView) -> StageDecision | None:
    n = len(_continuous(view))
    return (Stage.OUTLIER_HANDLING, False, f"{counted(n, 'continuous feature')} may hold extreme values") if n else None


def _scaling(view: DataView) -> StageDecision | None:
    n = len(_continuous(view))
    if not n or not view.task.supervised:
        return None
    return Stage.SCALING, False, f"{counted(n, 'numeric feature')}: linear and distance-based models need one scale"


def _feature_selection(view: DataView) -> StageDecision | None:
    if not view.task.supervised:
        return None
    limit = next((c.value for c in view.constraints if c.kind is ConstraintKind.MAX_FEATURES), None)
    if limit is not None:
        return Stage.FEATURE_SELECTION, True, f"the goal allows at most {limit} features"
    return Stage.FEATURE_SELECTION, False, f"{len(view.features)} features; fewer can be simpler and as accurate"


def _feature_engineering(view: DataView) -> StageDecision | None:
    dates = [c.name for c in view.features if c.semantic_type is SemanticType.DATETIME]
    if not dates or not view.task.supervised or view.task is TaskType.TIME_SERIES_FORECASTING:
        return None
    return Stage.FEATURE_ENGINEERING, False, f"date columns ({shortlist(dates)}) can become year/month/day features"


def _visualisation(view: DataView) -> StageDecision | None:
    said = next((c for c in view.constraints if c.kind is ConstraintKind.VISUALISE), None)
    return (Stage.VISUALISATION, True, f"plots were asked for: {said.reason}") if said else None


#: Stages the data calls for, each rule returning (stage, required, reason) or nothing. Only model tasks run
#: them; exploration just describes the table as it is.
STAGE_RULES: tuple[StageRule, ...] = (
    _imputation, _encoding, _column_filtering, _deduplication, _type_conversion, _outlier_handling, _scaling,
    _feature_selection, _feature_engineering,
)


def plan_stages(view: DataView) -> tuple[list[Stage], list[Stage], dict[str, str]]:
    """Required and optional stages for the task and this data, each with its reason."""
    required = dict(BASE_STAGES[view.task])
    optional = {**_ALWAYS_OPTIONAL, **_EXTRA_OPTIONAL.get(view.task, {})}
    left_out: dict[Stage, str] = {}
    if view.task in _MODEL_TASKS:
        for stage, is_required, reason in filter(None, (rule(view) for rule in STAGE_RULES)):
            (left_out if is_required is None else required if is_required else optional).setdefault(stage, reason)
    chosen = _visualisation(view)
    if chosen:
        required[chosen[0]] = chosen[2]
    optional = {s: r for s, r in optional.items() if s not in required}
    reasons = {f"stage.{s.value}": r for s, r in (*required.items(), *optional.items())}
    reasons |= {f"stage.{s.value}": f"left out: {r}" for s, r in left_out.items() if f"stage.{s.value}" not in reasons}
    return ordered(set(required)), ordered(set(optional)), reasons


def _features(profile: DatasetProfile, target: str | None, task: TaskType) -> list[ColumnProfile]:
    skip = {target, profile.time_column if task is TaskType.TIME_SERIES_FORECASTING else None}
    return [c for c in profile.columns if c.name not in skip and c.semantic_type not in NEVER_FEATURES]


# --------------------------------------------------------------------------------------------- detect


def detect_intent(goal: str, profile: DatasetProfile) -> Intent:
    """Read the task, target, stages and constraints from the goal and the profile, with a reason for each."""
    text = TEMPLATE_MARKUP.sub(" ", goal)  # template expressions are code, never words of the goal
    if not any(w.isalpha() for w in words(text)):
        markup = " It holds only template markup, which dagsmith never runs and which says no task." \
            if text != goal else ""
        raise AmbiguousGoal(vague_goal_question(goal, profile, markup))
    read = read_goal(text, profile)
    explicit, absent = explicit_target(text, profile)
    ruled = {name for c in column_constraints(text, lambda phrase: column_named(phrase, profile)) for name in c.value}
    matches = [m for m in column_matches(read, profile) if m.column not in ruled] or column_matches(read, profile)
    masked = {i for m in matches if m.kind in {MatchKind.EXACT, MatchKind.CLASSES} for i in range(m.start, m.end)}
    named = bool(explicit or absent) or any(m.score >= STRONG_MATCH and m.start < read.features_from for m in matches)
    scores = family_scores(read, masked, named)
    family, task_confidence = choose_family(scores, named, goal, profile)

    reasons = {}
    if read.corrections:
        reasons["spelling"] = "read " + ", ".join(f"'{a}' as '{b}'" for a, b in read.corrections)
    focus = None
    if family is Family.SUPERVISED:
        choice = supervised_target(read, explicit, absent, matches, profile)
        task, why = supervised_type(read, profile, choice.column)
    else:
        choice = TargetChoice(None, 1.0, "none: an unsupervised task works on all the columns")
        task, why = FAMILY_TASK[family], "nothing to predict"
        focus = focus_column(read, matches) if family is Family.EXPLORATION else None
    reasons["target"] = choice.reason
    reasons["task_type"] = f"{task.value.replace('_', ' ')}: {family_evidence(scores, family)}; {why}"
    asked = Constraint(kind=ConstraintKind.FOCUS, value=focus.column,
                       reason=f"the goal asks what goes with {target_reason(focus)}") if focus else None
    return compose_intent(goal, profile, task, choice.column, reasons, task_confidence * choice.confidence,
                          focus=asked)


def compose_intent(goal: str, profile: DatasetProfile, task: TaskType, target: str | None, reasons: dict[str, str],
                   confidence: float, *, focus: Constraint | None = None) -> Intent:
    """The intent for a reading of the goal (by any reasoner): its constraints and the stages the data needs;
    ``focus`` is the column an exploration relates the others to."""
    reasons = dict(reasons)
    constraints = (parse_constraints(goal, task) + ([focus] if focus else [])
                   + column_constraints(goal, lambda phrase: column_named(phrase, profile)))
    for c in constraints:
        several = c.kind in {ConstraintKind.EXCLUDE_FAMILY, ConstraintKind.METRIC}  # one reason per value
        reasons[f"constraint.{c.kind}" + (f".{c.value}" if several else "")] = c.reason
    excluded = set(excluded_columns(constraints, profile.column_names, {target}))
    features = [c for c in _features(profile, target, task) if c.name not in excluded]
    view = DataView(profile, task, profile.column(target) if target else None, features, constraints)
    required, optional, stage_reasons = plan_stages(view)
    return Intent(
        goal=goal, task_type=task, target=target, required_stages=required, optional_stages=optional,
        constraints=constraints, reasons={**reasons, **stage_reasons}, confidence=round(confidence, 3),
    )


def column_named(phrase: str, profile: DatasetProfile) -> str | None:
    """The column a short phrase of the goal names ("the size", "zip code"), by the same matching as the target."""
    found = [m for m in column_matches(read_goal(phrase, profile), profile)
             if m.kind not in {MatchKind.VALUE, MatchKind.CLASSES} and m.score >= MATCH_SCORE[MatchKind.PARTIAL]]
    return max(found, key=lambda m: m.score).column if found else None


def supervised_target(read: Goal, explicit: Match | None, absent: str | None, matches: list[Match],
                       profile: DatasetProfile) -> TargetChoice:
    """A designated column ("target is X") wins over one the goal mentions; a designated absent one is kept so
    validation can say it is missing."""
    if explicit:
        return TargetChoice(explicit.column, explicit.score, target_reason(explicit))
    if absent:
        return TargetChoice(absent, 0.3, f"the goal designates '{absent}' as the target, but no column matches it")
    return choose_target(read, matches, verb_positions(read), profile)


def supervised_type(read: Goal, profile: DatasetProfile, target_name: str | None) -> tuple[TaskType, str]:
    """Classification or regression from the target; forecasting when the goal looks ahead along a time column."""
    target = profile.column(target_name) if target_name else None
    task, why = supervised_task(read, target, profile)
    future = _FUTURE.search(" ".join(read.words))
    if not future:
        return task, why
    if profile.time_column and task is TaskType.REGRESSION and target_name != profile.time_column:
        return TaskType.TIME_SERIES_FORECASTING, (
            f"the goal looks ahead ('{future.group(0)}') and '{profile.time_column}' orders the rows in time")
    return task, why + f"; the goal looks ahead ('{future.group(0)}') but " + (
        "there is no time column to forecast along" if not profile.time_column else "the target is not numeric")


def family_evidence(scores: dict[Family, list[tuple[str, float]]], family: Family) -> str:
    said = [phrase for phrase, _ in scores.get(family, [])]
    return f"the goal says {', '.join(repr(s) for s in said)}" if said else "the goal names a column and nothing else"


# --------------------------------------------------------------------------------------------- validate

MIN_ROWS_SUPERVISED = 20
MIN_ROWS_OTHER = 10
SMALL_DATASET = 200
#: A binary minority below this share, or a multiclass class below half its fair share, is imbalanced.
BINARY_MINORITY = 0.3
TARGET_GAPS = 0.05
NEAR_PERFECT = 0.95
#: A classification target with more distinct numbers than this is a quantity, not a set of classes.
MAX_NUMERIC_CLASSES = 20
#: Names of columns usually filled in after the outcome is known (they leak it).
POST_OUTCOME = re.compile(
    r"(date_?closed|closed_?(at|date|on)|refund|cancel+ation_?(reason|date)|churn_?(date|reason)|"
    r"termination_?(date|reason)|exit_?(date|reason)|chargeback|charged_?off|recover(y|ies|ed)|settle(d|ment)|"
    r"payoff|paid_?(off|total|principal|interest|late)|days_?to_?(close|resolution)|final_?(status|result|grade))",
    re.I)


def _error(code: str, message: str) -> IntentIssue:
    return IntentIssue(level=IssueLevel.ERROR, code=code, message=message)


def _warning(code: str, message: str) -> IntentIssue:
    return IntentIssue(level=IssueLevel.WARNING, code=code, message=message)


def validate_intent(intent: Intent, profile: DatasetProfile) -> Intent:
    """Check an intent (from any reasoner) against the data: errors block planning, warnings inform."""
    found = [*_goal_issues(intent), *_size_issues(intent, profile), *_target_issues(intent, profile),
             *_feature_issues(intent, profile), *_leakage_issues(intent, profile), *_metric_issues(intent),
             *_column_issues(intent, profile)]
    return intent.model_copy(update={"issues": intent.issues + [i for i in found if i not in intent.issues]})


def _goal_issues(intent: Intent) -> list[IntentIssue]:
    if intent.goal.strip():
        return []
    return [_error("empty_goal", "The goal is empty: say what you want to learn from the data.")]


def _size_issues(intent: Intent, profile: DatasetProfile) -> list[IntentIssue]:
    supervised = intent.task_type.supervised
    minimum = MIN_ROWS_SUPERVISED if supervised else MIN_ROWS_OTHER
    if profile.n_rows < minimum:
        return [_error("too_few_rows", f"The table has {profile.n_rows} rows; "
                       f"{intent.task_type.value.replace('_', ' ')} needs at least {minimum}.")]
    if profile.n_rows < SMALL_DATASET and intent.task_type is not TaskType.EXPLORATORY_ANALYSIS:
        return [_warning("small_dataset", f"Only {profile.n_rows} rows: results will vary a lot between runs "
                         f"and held-out metrics are rough.")]
    return []


def _target_issues(intent: Intent, profile: DatasetProfile) -> list[IntentIssue]:
    if not intent.task_type.supervised:
        return []
    if intent.target is None:
        return [_error("no_target", "There is no column to predict: the goal names none and the profile found no "
                       "candidate. Say which column to predict, e.g. 'predict <column>'.")]
    target = profile.column(intent.target)
    if target is None:
        return [_error("target_missing", _missing_target_message(intent.target, profile))]
    if target.count == 0:
        return [_error("target_empty", f"'{target.name}' has no values at all ({target.missing} missing): "
                       f"there is nothing to learn from.")]
    if not any(column.count for column in profile.columns if column.name != target.name):
        return [_error("no_features", f"'{target.name}' is the only column with values: there are no features to "
                       f"learn it from. Add the columns that could predict it.")]
    issues = _type_issues(intent.task_type, target)
    if target.missing_ratio >= TARGET_GAPS:
        issues.append(_warning("target_missing_values", f"'{target.name}' is missing in {target.missing} rows "
                               f"({percent(target.missing_ratio)}); those rows cannot be used for training."))
    if intent.task_type.classification and target.unique >= 2:
        issues += _imbalance(target)
    return issues


def _feature_issues(intent: Intent, profile: DatasetProfile) -> list[IntentIssue]:
    """Something to learn from: a column that is not an identifier, free text, a contact detail or constant (nor,
    without a target, a date: dates alone give rows no shape to group or stand out from)."""
    if intent.task_type in {TaskType.EXPLORATORY_ANALYSIS, TaskType.TIME_SERIES_FORECASTING}:
        return []
    others = [c for c in profile.columns if c.name != intent.target and c.count]
    unusable = NEVER_FEATURES if intent.task_type.supervised else NEVER_FEATURES | {SemanticType.DATETIME}
    if not others or any(c.semantic_type not in unusable and c.unique > 1 for c in others):
        return []
    listed = shortlist([f"{c.name} ({'constant' if c.unique <= 1 else KIND_NAMES[c.semantic_type]})" for c in others])
    aim = f"predict '{intent.target}' from" if intent.target else "learn from"
    return [_error("no_features", f"There is nothing to {aim}: every column is an identifier, free text, a contact "
                   f"detail{'' if intent.target else ', a date'} or constant ({listed}). Add columns that measure or "
                   f"describe the rows.")]


def _column_issues(intent: Intent, profile: DatasetProfile) -> list[IntentIssue]:
    """Columns the goal rules in or out must exist, and must leave the target and a feature to learn from."""
    issues = []
    for constraint in intent.constraints:
        if constraint.kind in {ConstraintKind.EXCLUDE_COLUMNS, ConstraintKind.ONLY_COLUMNS}:
            issues += [_error("column_missing", _missing_target_message(name, profile))
                       for name in constraint.value if profile.column(name) is None]
    excluded = excluded_columns(intent.constraints, profile.column_names, set())
    if intent.target in excluded and any(c.kind is ConstraintKind.EXCLUDE_COLUMNS for c in intent.constraints):
        issues.append(_error("target_excluded", f"The goal leaves out '{intent.target}', the column it asks to "
                             f"predict. Say which column to predict, or keep it in."))
    if intent.target and not set(profile.column_names) - set(excluded) - {intent.target}:
        issues.append(_error("no_features", "The goal leaves out every column but the target: there is nothing "
                             "left to learn from."))
    return issues


def _missing_target_message(name: str, profile: DatasetProfile) -> str:
    by_letters = {"".join(words(c)): c for c in profile.column_names}
    close = difflib.get_close_matches("".join(words(name)), list(by_letters), n=3, cutoff=0.5)
    closest = f" The closest names are {', '.join(by_letters[c] for c in close)}." if close else ""
    shown = profile.column_names[:25]
    more = f" and {len(profile.column_names) - 25} more" if len(profile.column_names) > 25 else ""
    return f"There is no column '{name}' in the data.{closest} The columns are: {', '.join(shown)}{more}."


def _type_issues(task: TaskType, target: ColumnProfile) -> list[IntentIssue]:
    if target.semantic_type in UNPREDICTABLE:
        kind = KIND_NAMES[target.semantic_type] + (", a different value on nearly every row"
                                                    if target.semantic_type is SemanticType.ID else "")
        return [_error("target_unusable", f"'{target.name}' holds {kind} ({class_list(target, 3)}): nothing a "
                       f"model can learn to predict. Name the column whose value you want predicted.")]
    if task.supervised and not task.classification and not holds_numbers(target):
        return [_error("target_not_numeric", f"Regression needs a numeric target, but '{target.name}' is "
                       f"{target.semantic_type.value} ({class_list(target)}). Ask to classify it instead.")]
    if not task.classification:
        return []
    if target.unique == 1:
        return [_error("single_class", f"'{target.name}' has a single class ('{class_list(target)}'): there is "
                       f"nothing to tell apart.")]
    if holds_numbers(target) and target.unique > MAX_NUMERIC_CLASSES:
        return [_error("target_not_categorical", f"Classification needs classes, but '{target.name}' is a number "
                       f"with {target.unique} distinct values. Ask for regression, or bin it into classes first.")]
    if task is TaskType.BINARY_CLASSIFICATION and target.unique > 2:
        return [_error("not_binary", f"Binary classification needs two classes; '{target.name}' has {target.unique}.")]
    return []


def _imbalance(target: ColumnProfile) -> list[IntentIssue]:
    """The smallest class against its fair share. Classes beyond the profile's top values share what is left, so
    the smallest of them holds at most that remainder split evenly: still enough to warn."""
    shown = target.top_values
    hidden = target.unique - len(shown)
    remainder = target.count - sum(v.count for v in shown)
    sizes = [(float(v.count), f"'{v.value}'") for v in shown]
    if hidden > 0:
        sizes.append((remainder / hidden, "a class beyond the profile's top values"))
    if not sizes:
        return []
    smallest, name = min(sizes)
    share = smallest / target.count
    if share >= (BINARY_MINORITY if target.unique == 2 else 0.5 / target.unique):
        return []
    return [_warning("class_imbalance", f"'{target.name}' is imbalanced: the smallest class ({name}) holds "
                     f"{percent(share)} of the rows; accuracy will flatter the model, prefer balanced metrics.")]


def _leakage_issues(intent: Intent, profile: DatasetProfile) -> list[IntentIssue]:
    """Columns that would let a model cheat: identifiers, near-copies of the target, values known only afterwards."""
    if not intent.task_type.supervised or not intent.target or profile.column(intent.target) is None:
        return []
    target = intent.target
    return [
        _warning("leakage_suspect", message)
        for rule in (_identifiers, _near_copies, _after_outcome)
        for message in rule(profile, target)
    ]


def _identifiers(profile: DatasetProfile, target: str) -> Iterable[str]:
    for c in profile.columns:
        if c.semantic_type is SemanticType.ID and c.name != target:
            yield (f"'{c.name}' looks like an identifier (unique per row): it carries no signal and can leak how "
                   f"rows were collected; it should not be a feature.")


def _near_copies(profile: DatasetProfile, target: str) -> Iterable[str]:
    for corr in profile.correlations:
        other = corr.b if corr.a == target else corr.a if corr.b == target else None
        if other and abs(corr.value) >= NEAR_PERFECT:
            yield (f"'{other}' predicts '{target}' almost perfectly ({corr.method} {corr.value:.2f}): check it is "
                   f"known before the outcome.")
    for group in profile.near_identical_columns:
        if target in group:
            yield f"{', '.join(c for c in group if c != target)} nearly duplicates the target '{target}'."


def _after_outcome(profile: DatasetProfile, target: str) -> Iterable[str]:
    for c in profile.columns:
        if c.name != target and POST_OUTCOME.search(c.name):
            yield (f"'{c.name}' sounds like it is recorded after the outcome; if so it leaks the answer and must not "
                   f"be a feature.")


def _metric_issues(intent: Intent) -> list[IntentIssue]:
    fits = METRICS_FOR.get(intent.task_type, set())
    task = intent.task_type.value.replace("_", " ")
    return [
        _warning("metric_mismatch", f"The metric '{c.value}' does not fit {task}; the evaluator's default metrics "
                 f"are used instead.")
        for c in intent.constraints if c.kind is ConstraintKind.METRIC and c.value not in fits
    ]
