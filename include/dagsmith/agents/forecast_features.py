"""What a forecast may learn from: only what it would know ahead of the times it forecasts.

Trained on the same day's open, high and low, a forecast of the close scores well on held-out days and is useless on
the days to come, when none of them exists yet. So a forecast's features are the time, its calendar and the columns
known ahead (``ColumnProfile.known_ahead``); columns measured with the time are left out, said in the plan's reasons,
unless the goal names them as the features to use ("forecast sales from the planned advertising").
"""

from __future__ import annotations

from dagsmith.agents.intent.wording import shortlist
from dagsmith.models.intent import Constraint, ConstraintKind, Names
from dagsmith.models.profile import ColumnProfile


def unknown_ahead(features: list[ColumnProfile], target: str | None, constraints: list[Constraint]) -> Names | None:
    """The constraint leaving out of a forecast of ``target`` the ``features`` measured with the time, or None when
    every feature is known ahead or the goal's ``constraints`` name the only columns to use (it knows them ahead)."""
    left_out = [c.name for c in features if c.known_ahead is None]
    if not left_out or any(c.kind is ConstraintKind.ONLY_COLUMNS for c in constraints):
        return None
    aim = f"'{target}'" if target else "the target"
    return Names(kind=ConstraintKind.EXCLUDE_COLUMNS, value=left_out, reason=(
        f"left out of the forecast: {shortlist(left_out)} {'is' if len(left_out) == 1 else 'are'} measured at the "
        f"same time as {aim}, so not known ahead of the times forecast (to explain {aim} from them instead, ask "
        f"for a regression)"))
