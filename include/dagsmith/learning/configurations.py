"""Learning from execution history which model configurations win on which tables.

Every modelling search records, per candidate that completed, the configuration its own search chose and the
table's meta-features (``execution.search``). The planner reads the latest of them beside the shipped portfolio
(``dagsmith_kit.portfolio``), so each run's winners start the searches on similar tables after it.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from dagsmith.store import schema
from dagsmith_kit.portfolio import Table, Winner, clean

#: The latest runs with a search whose winners are read; older ones have been superseded by what came after.
RECENT_RUNS = 500


def search_winners(session: Session, limit: int = RECENT_RUNS) -> list[Winner]:
    """The configurations the deployment's latest searches chose, newest first, with their tables' meta-features."""
    searches = session.scalars(select(schema.Execution.trace["search"])  # only that part of a trace is read
                               .where(schema.Execution.trace.has_key("search"))
                               .order_by(schema.Execution.id.desc()).limit(limit))
    winners = []
    for search in searches:
        for summary in (search if isinstance(search, dict) else {}).values():
            table = Table.of(summary.get("table") or {})
            if table is None:
                continue
            for candidate in summary.get("candidates") or []:
                params = clean(candidate.get("params"))
                if params and not candidate.get("error"):
                    winners.append(Winner(str(candidate.get("name")), table, params, "history"))
    return winners
