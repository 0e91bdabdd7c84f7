"""Columns a goal rules in or out: "without the size column", "ignore zip code and city", "only from age and
income". Each named column becomes a typed constraint the pipeline honours (the column is no feature of any step);
a name that is no column of the table is kept as said, so validation can refuse it and list the columns there are.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from dagsmith.agents.intent.mentions import column_named
from dagsmith.models.intent import Constraint, ConstraintKind, Names
from dagsmith.models.profile import DatasetProfile

#: A noun that says a phrase means a column of the table.
_COLUMN_NOUN = r"(?:columns?|features?|variables?|fields?|attributes?)"
_EXCLUDE = re.compile(r"\b(?:without(?: using)?|ignoring|excluding|except(?: for)?|leaving out|dropping|not using|"
                      r"apart from|other than)\s+(?P<what>[^,;.!?()]+)")
#: Where a phrase of its own opens: the goal's start, a punctuation mark or a dash.
_OPENING = r"(?:^|[,;:.!?(]|\s[-\u2013\u2014])\s*"
#: An instruction rules columns out where it opens a clause ("who survived? ignore the name", "predict churn and drop
#: the id"); after a noun the verb is what the rows do ("whether members drop their plan").
_INSTRUCTION = re.compile(rf"(?:{_OPENING}|\b(?:and|but|then)\s+)(?:ignore|exclude|drop|leave out|do not use|"
                          r"don'?t use)\s+(?P<what>[^,;.!?()]+)")
#: "no" rules columns out only where it opens a phrase of its own ("predict churn, no total charges"); inside a clause
#: it says what the rows are ("days that get no rain", "is there no delay", "churn or no churn", "yes/no").
_NO = re.compile(rf"{_OPENING}no\s+(?P<what>[^,;.!?()]+)")
#: "with no region column": "with no" rules a column out only when it says "column" (or field, variable, ...);
#: "rows with no total charges" speaks of rows.
_WITH_NO = re.compile(rf"\bwith no\s+(?P<what>[^,;.!?()]+?\s{_COLUMN_NOUN})\b")
#: "is without a job": after a form of "be" or "have", "without" says what the rows are (often the very thing to
#: predict), not which columns to leave out.
_STATE = re.compile(r"\b(?:is|are|was|were|be|been|being|has|have|had|having)\s+without\s+$")
_ONLY = re.compile(r"\b(?:only (?:from|using|use|with|on)|using only|use only|just (?:from|using))\s+"
                   r"(?P<what>[^;.!?()]+)")
#: Where a list of names ends: the goal goes on to say something else, or a relative clause says what the names are
#: ("the id column that identifies each price row").
_END = re.compile(r"\s(?:to|for|so|because|since|when|in|as|but|then|while|if|that|which|who|whose|"
                  r"predict\w*|classify\w*|estimat\w*)\s")
_SPLIT = re.compile(r"\s*(?:,|\band\b|\bor\b|\bnor\b|&)\s*")
_FILLER = re.compile(rf"^(?:the|a|an|any|its|their|his|her|my|our)\s+|\s+{_COLUMN_NOUN}$")
#: Words that make a phrase a column reference even when no column matches it ("without the foo column").
_COLUMN_WORD = re.compile(rf"\b{_COLUMN_NOUN}\b")


def _names(what: str) -> list[str]:
    """The names listed in ``what``, up to where the goal goes on ("except when humidity is missing" lists none)."""
    what = _END.split(f" {what} ", maxsplit=1)[0]
    return [name for part in _SPLIT.split(what) if (name := _FILLER.sub("", part.strip()).strip())]


def column_constraints(goal: str, column_of: Callable[[str], str | None]) -> list[Constraint]:
    """``exclude_columns`` and ``only_columns`` read from ``goal``; ``column_of`` finds the column a phrase names.

    A phrase after "without"/"ignore"/... that names no column and says no "column" is no exclusion ("without
    overfitting"); one that says "column" but matches none is kept as written, for validation to refuse.
    """
    text = goal.lower()
    found = []
    for kind, patterns, verb in ((ConstraintKind.EXCLUDE_COLUMNS, (_EXCLUDE, _INSTRUCTION, _NO, _WITH_NO), "leave out"),
                                 (ConstraintKind.ONLY_COLUMNS, (_ONLY,), "use only")):
        named: dict[str, str] = {}
        for hit in (hit for pattern in patterns for hit in pattern.finditer(text)):
            if _STATE.search(text[: hit.start("what")]):
                continue
            said_column = bool(_COLUMN_WORD.search(hit.group("what")))
            for phrase in _names(hit.group("what")):
                column = column_of(phrase)
                if column or said_column:
                    named.setdefault(column or phrase, phrase)
        if named:
            said = ", ".join(f"'{phrase}'" for phrase in named.values())
            found.append(Names(kind=kind, value=list(named), reason=f"the goal says to {verb} {said}"))
    return found


def excluded_columns(constraints: list[Constraint], columns: list[str], keep: set[str | None]) -> list[str]:
    """The columns no step may use as a feature: those ruled out, and with "only from ..." every other one (the
    columns in ``keep``, such as the target, stay)."""
    ruled_out = {name for c in constraints if c.kind is ConstraintKind.EXCLUDE_COLUMNS for name in c.value}
    only = next((set(c.value) for c in constraints if c.kind is ConstraintKind.ONLY_COLUMNS), None)
    return [name for name in columns if name not in keep and (name in ruled_out or (only is not None
                                                                                  and name not in only))]


def ruled_columns(goal: str, profile: DatasetProfile) -> set[str]:
    """The table's columns the goal rules in or out as features: whichever it is, the goal does not ask to predict
    them."""
    return {name for c in column_constraints(goal, lambda phrase: column_named(phrase, profile)) for name in c.value}
