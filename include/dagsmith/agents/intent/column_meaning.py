"""Columns by meaning: when the words a goal uses for what to predict name no column ("whether a woman *takes part*
in the labour force" over `participation`), the embedding model compares the goal's short phrases with the column
names, and a column that clearly wins for one phrase is taken, with the similarities as its reason.

Clearly means that this column alone is close (cosine similarity at least ``MIN_SIMILARITY`` to some phrase); when
several are, the error names them with the phrases that brought them up, so a guess never passes for a reading.
"""

from __future__ import annotations

from dataclasses import dataclass

from dagsmith.agents.intent.reading import read_goal
from dagsmith.agents.intent.lexicon import STOPWORDS, TASK_STEMS
from dagsmith.embeddings import Embedder
from dagsmith.models.profile import ColumnProfile, DatasetProfile
from dagsmith.text import words

MIN_SIMILARITY = 0.4
#: Longest phrase compared: names are short, and longer spans blur what the phrase is about.
MAX_PHRASE_WORDS = 3


@dataclass(frozen=True)
class Meaning:
    """A column and the goal's phrase closest to it in meaning."""

    column: str
    phrase: str
    similarity: float

    def __str__(self) -> str:
        return f"{self.column} ('{self.phrase}', {self.similarity:.2f})"


@dataclass(frozen=True)
class Reading:
    """The columns some phrase of the goal means, closest first."""

    close: list[Meaning]

    @property
    def clear(self) -> bool:
        """Only one column is close: the reading needs no question."""
        return len(self.close) == 1

    @property
    def reason(self) -> str:
        best = self.close[0]
        return (f"closest in meaning to the goal's '{best.phrase}' (similarity {best.similarity:.2f} by the "
                f"embedding model; no other column reaches {MIN_SIMILARITY})")


def phrases(goal: str, profile: DatasetProfile) -> list[str]:
    """The goal's runs of content words outside its inputs ("from ..."), and their sub-phrases of up to three words."""
    read = read_goal(goal, profile)
    found: list[str] = []
    run: list[str] = []
    for index in range(len(read.words) + 1):
        word = read.words[index] if index < len(read.words) and not read.among_inputs(index) else None
        if word and read.stems[index] not in STOPWORDS and read.stems[index] not in TASK_STEMS:
            run.append(word)
            continue
        found += [" ".join(run[i:j]) for i in range(len(run))
                  for j in range(i + 1, min(i + MAX_PHRASE_WORDS, len(run)) + 1)]
        run = []
    return list(dict.fromkeys(found))


def closest_in_meaning(goal: str, profile: DatasetProfile, embedder: Embedder) -> list[Meaning]:
    """Every column with the goal's phrase closest to it in meaning, closest first; none when the goal has no
    phrase to compare."""
    said, names = phrases(goal, profile), profile.column_names
    if not said or not names:
        return []
    vectors = embedder.embed(said + [_readable(column) for column in profile.columns])
    similarity = vectors[: len(said)] @ vectors[len(said):].T
    best = similarity.argmax(axis=0)
    return sorted((Meaning(name, said[best[i]], float(similarity[best[i], i])) for i, name in enumerate(names)),
                  key=lambda m: -m.similarity)


def read_by_meaning(goal: str, profile: DatasetProfile, embedder: Embedder) -> Reading | None:
    """Each column's best phrase of the goal; None when no column is close to any phrase."""
    close = [m for m in closest_in_meaning(goal, profile, embedder) if m.similarity >= MIN_SIMILARITY]
    if not close:
        return None
    return Reading(close)


def _readable(column: ColumnProfile) -> str:
    """'order_status' and 'OrderStatus' as the words 'order status', which the model reads better; a described column
    as its name and description ("hv: median value of the homes in the block")."""
    name = " ".join(words(column.name)) or column.name
    return f"{name}: {column.description}" if column.description else name
