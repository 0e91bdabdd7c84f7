"""The words the intent rules know, as stems: function words and the other word classes the rules skip or look for,
the task words of each family of goals with their weights, and the words that name a column in other words.

One vocabulary serves every rule, so the word a misspelling is corrected to is always one some rule reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from dagsmith.text import stem, words


def stems_of(text: str) -> tuple[str, ...]:
    """The stems of the words of ``text``, in order: how the rules compare words."""
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
    "okay lets using given our data dataset table file frame across among between within throughout during until "
    "till since because while whilst unless though although whether toward towards against upon via onto unlike "
    "despite"
))
#: Nouns that name the rows or the idea of a target, not a column: "predict which customers leave".
GENERIC_NOUNS = frozenset(stems_of(
    "customer client user employee staff worker people person patient applicant borrower passenger row record "
    "sample observation instance item entry case company business value outcome target label class category type "
    "kind group result variable column field feature model future next someone one month week year day time period "
    "member subscriber"
))
#: Words between two named columns that mean the goal asks for both ("price and cut").
CONJUNCTIONS = frozenset(stems_of("and or plus also well as both either the a an its their of"))
JOINING_WORDS = frozenset(stems_of("and or plus both either"))
#: Words asking for a model of each of the targets a goal names, wherever they stand ("model them separately").
EACH_WORDS = frozenset(stems_of("separately individually independently respectively"))
#: Words asking for it only when the targets or a model come next ("both price and rooms", "a separate model"); "both
#: cities" and "separate houses" are about the rows.
BOTH_WORDS = frozenset(stems_of("both separate"))
#: Words asking for one per target when what they count is the targets, a model or nothing ("one model each", "a
#: pipeline per target", "each of price and rooms", "a model for each"); "each of the houses", "per customer" and
#: "each row" count the rows.
PER_WORDS = frozenset(stems_of("each every per"))
MODEL_NOUNS = frozenset(stems_of("model models pipeline pipelines"))
PER_WHAT = MODEL_NOUNS | frozenset(stems_of("target targets column columns variable variables outcome outcomes"))
#: Words between a per word and what it counts ("each one of the two", "each of them").
PER_FILLER = frozenset(stems_of("of one ones the these those them their its all two three four five several"))
#: Words before a model noun that make it several ("two models", "their own model", "individual pipelines").
MODEL_COUNTS = frozenset(stems_of("own individual distinct two three four five several multiple"))
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

TASK_PHRASES: tuple[tuple[Family, tuple[str, ...], float], ...] = tuple(
    (family, stems_of(phrase), weight)
    for family, by_weight in TASK_RULES.items()
    for weight, phrases in by_weight.items()
    for phrase in phrases.split(", ")
)

#: Stems of the task words: never read as an abbreviated column name ("predict" is no 'pred' column).
TASK_STEMS = frozenset(s for _, phrase, _ in TASK_PHRASES for s in phrase)


@dataclass(frozen=True)
class Synonym:
    """Goal words that name a column whose name is different; ``values`` restricts it to columns holding them."""

    goal: frozenset[str]
    column: frozenset[str]
    values: frozenset[str] = frozenset()


#: (goal words, column-name words, values the column must hold). "default" names a column 'Status' only when
#: it holds good/bad; "sell for" names 'SalesPrice'.
SYNONYM_TABLE: tuple[tuple[str, str, str], ...] = (
    (("churn leave quit resign cancel unsubscribe drop terminate attrition defect exit retain retention stay lose lost "
      "walk"),
     "churn exited attrition", ""),
    ("buy buyer purchase purchaser", "purchase purchased buy", ""),
    ("price cost worth value expensive cheap sell", "price saleprice cost value", ""),
    ("default repay repayment pay creditworthy creditworthiness risk risky bad good loan", "status class default",
     "good bad default paid"),
    ("survive survival die died death dead live alive mortality fatal deceased",
     "survived survive survival dead died death deceased mortality fatal", ""),
    ("survive survival die died death dead live alive mortality fatal deceased", "status outcome vital",
     "dead died alive live lived survived deceased death"),
    ("kind breed variety", "species variety", ""),
    ("strength strong", "strength", ""),
    ("income salary wage earning earnings", "income wage salary earnings", ""),
    ("heavy weigh weight mass", "mass weight", ""),
)
SYNONYMS = tuple(
    Synonym(frozenset(stems_of(goal)), frozenset(stems_of(column)), frozenset(stems_of(values)))
    for goal, column, values in SYNONYM_TABLE
)
SYNONYM_TEXTS = tuple(goal for goal, _, _ in SYNONYM_TABLE)


def _vocabulary() -> dict[str, str]:
    """Stem -> word as the rules write it, for every task and synonym word long enough to be misspelt."""
    phrases = [p for by_weight in TASK_RULES.values() for ps in by_weight.values() for p in ps.split(", ")]
    written = [w for text in (*phrases, *SYNONYM_TEXTS) for w in words(text)]
    return {stem(w): w for w in written if len(stem(w)) >= 4}


VOCABULARY = _vocabulary()
