"""Word-level text helpers shared by the intent detector and catalog search: tokens and a light stemmer."""

from __future__ import annotations

import re

#: camelCase and ACRONYMWord boundaries, but not an acronym's plural ("SVMs", "GBMs").
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])(?![A-Z]s\b)")
_TOKEN = re.compile(r"[a-z]+|\d+(?:\.\d+)?")


def words(text: str) -> list[str]:
    """Lower-case word tokens; camelCase, snake_case and dotted names split, so goals and column names compare."""
    return _TOKEN.findall(_CAMEL.sub(" ", re.sub(r"['\u2019`]", "", text)).lower())


def stem(word: str) -> str:
    """A light stemmer: just enough for plurals and verb forms (churned, prices, species) to meet their column."""
    for suffix, replacement in (("sses", "ss"), ("ies", "i"), ("ied", "i")):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            return word[: -len(suffix)] + replacement
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 3:
        return word[:-1]
    return word[:-1] + "i" if word.endswith("y") and len(word) > 2 else word
