"""Answers remembered: what a person chose a goal's words to mean, on a table of one shape.

A question is worth asking once. When a person answers one (or names the target outright), the goal's words and the
reading they chose are stored against the table's shape: its column names and their semantic types, so next month's
file of the same table matches and an unrelated table with a column of the same name does not. The next goal in the
same words on a table of that shape is read so without asking, saying whose choice it follows. A person's own
answers come first; everyone's (owner '') next, as the recommender's learned patterns are kept.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from dagsmith.models.catalog import TaskType
from dagsmith.models.intent import GivenFields, Intent
from dagsmith.models.profile import DatasetProfile
from dagsmith.store import schema
from dagsmith.text import words

#: The owner of answers that count for everyone.
EVERYONE = ""
ANONYMOUS = "anonymous"


@dataclass(frozen=True)
class Remembered:
    """A reading chosen before for the same words on a table of the same shape."""

    task_type: TaskType
    target: str | None
    own: bool  # chosen by the person asking now, or by someone else
    how: str  # "answered" (a question) or "given" (the target named outright)
    chosen_at: datetime
    phrase: str

    def fields(self, given: GivenFields) -> GivenFields:
        """The fields ``given`` with this reading's target and task in place."""
        return given.model_copy(update={"target": self.target, "task": self.task_type})

    def explain(self, intent: Intent) -> Intent:
        """``intent`` (read with this reading's fields) saying that the reading follows this choice."""
        task = self.task_type.value.replace("_", " ")
        reasons = {**intent.reasons, "task_type": f"{task}: {self.reason}",
                   "target": f"{self.target}: {self.reason}" if self.target else intent.reasons.get("target", "")}
        return intent.model_copy(update={"reasons": reasons})

    @property
    def reason(self) -> str:
        what = f"'{self.target}'" if self.target else self.task_type.value.replace("_", " ")
        return (f"{'you' if self.own else 'another user'} chose {what} for '{self.phrase}' on a table of these "
                f"columns on {self.chosen_at:%Y-%m-%d}")


def table_shape(profile: DatasetProfile) -> str:
    """A digest of the table's column names and semantic types, in any order."""
    columns = sorted(f"{c.name}\x1f{c.semantic_type.value}" for c in profile.columns)
    return hashlib.sha256("\x1e".join(columns).encode()).hexdigest()


def phrase_of(goal: str) -> str:
    """The goal's words as compared: lower-cased, punctuation and spacing aside."""
    return " ".join(words(goal))


def remember(session: Session, profile: DatasetProfile, goal: str, task_type: TaskType, target: str | None, *,
             user: str, how: str) -> None:
    """Store a person's reading of ``goal`` for themselves and for everyone (a later choice replaces an earlier)."""
    shape, phrase = table_shape(profile), phrase_of(goal)
    if not phrase:
        return
    for owner in dict.fromkeys((user if user != ANONYMOUS else EVERYONE, EVERYONE)):
        values = {"owner": owner, "table_shape": shape, "phrase": phrase, "task_type": task_type.value,
                  "target": target, "chosen_by": user, "how": how}
        session.execute(insert(schema.GoalAnswer).values(**values).on_conflict_do_update(
            constraint="uq_goal_answers_key",
            set_={**{k: v for k, v in values.items() if k not in {"owner", "table_shape", "phrase"}},
                  "chosen_at": func.now()}))


def recall(session: Session, profile: DatasetProfile, goal: str, *, user: str) -> Remembered | None:
    """The reading chosen before for these words on a table of this shape: the user's own, else everyone's; None when
    there is none or its target is no longer a column."""
    owners = [user, EVERYONE] if user != ANONYMOUS else [EVERYONE]
    rows = session.scalars(select(schema.GoalAnswer).where(
        schema.GoalAnswer.table_shape == table_shape(profile), schema.GoalAnswer.phrase == phrase_of(goal),
        schema.GoalAnswer.owner.in_(owners)))
    found = sorted(rows, key=lambda row: owners.index(row.owner))
    if not found or (found[0].target and found[0].target not in profile.column_names):
        return None
    row = found[0]
    return Remembered(TaskType(row.task_type), row.target, row.chosen_by == user, row.how, row.chosen_at, row.phrase)
