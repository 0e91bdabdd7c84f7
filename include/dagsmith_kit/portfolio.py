"""Configurations that won on similar tables: where a model's search starts instead of from scratch.

A search that starts cold spends its first trials rediscovering settings that win on most tables of a kind. The
portfolio (``portfolio.json`` beside this module, built by ``python -m dagsmith.bench.portfolio``, ``make
portfolio``) holds, per model service, the configuration its search chose on real tables the benchmark suite never
uses, with those tables' meta-features; a deployment adds the winners of its own runs. The planner hands each
candidate the configurations that won on the nearest tables (``nearest``); the search tries them right after the
service's own (``dagsmith_kit.search``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

PORTFOLIO_FILE = Path(__file__).with_name("portfolio.json")
#: Configurations handed to a candidate at most: enough to cover a few kinds of table, few enough to leave time.
MAX_WARM_STARTS = 3
#: What a remembered configuration may hold: it comes from a service's output, which is untrusted.
MAX_PARAMS, MAX_TEXT = 12, 40
#: Dtype names of columns a model reads as numbers; any other column counts as categorical.
NUMERIC_DTYPES = ("int", "uint", "float", "bool")


@dataclass(frozen=True)
class Table:
    """A table's meta-features: what tells whether a configuration that won on one table suits another."""

    task_type: str
    rows: int
    columns: int
    categorical_share: float  # of the feature columns

    def distance(self, other: Table) -> float:
        """Orders of magnitude apart in rows and in columns, plus the difference in categorical share; a binary task
        is a step away from a multiclass one, a regression from a classification further still."""
        kind = 0.0 if self.task_type == other.task_type else 1.0 if _kind(self) == _kind(other) else 3.0
        return (abs(math.log10(self.rows + 1) - math.log10(other.rows + 1))
                + abs(math.log10(self.columns + 1) - math.log10(other.columns + 1))
                + abs(self.categorical_share - other.categorical_share) + kind)

    @classmethod
    def of(cls, raw: Any) -> Table | None:
        """A table's meta-features as stored (a dict), or None when they do not hold up."""
        try:
            table = cls(str(raw["task_type"]), int(raw["rows"]), int(raw["columns"]),
                        float(raw["categorical_share"]))
        except (KeyError, TypeError, ValueError):
            return None
        return table if table.rows > 0 and table.columns > 0 and 0 <= table.categorical_share <= 1 else None

    @classmethod
    def of_columns(cls, task_type: str, rows: int, dtypes: list[str]) -> Table:
        """A table of ``rows`` whose feature columns have these pandas dtypes (as read, or as its profile says)."""
        categorical = sum(not dtype.lower().startswith(NUMERIC_DTYPES) for dtype in dtypes)
        return cls(task_type, rows, len(dtypes), round(categorical / max(1, len(dtypes)), 3))

    def stored(self) -> dict[str, Any]:
        return asdict(self)


def _kind(table: Table) -> str:
    return "classification" if table.task_type.endswith("classification") else "regression"


@dataclass(frozen=True)
class Winner:
    """The configuration a service's search chose on a table, and where it was learned."""

    service: str
    table: Table
    params: dict[str, Any]
    source: str  # "portfolio", or "history" for the deployment's own runs


def clean(params: Any) -> dict[str, Any] | None:
    """``params`` as a configuration worth trying: a few named numbers, switches or short words, nothing else (no
    search, no nesting); None when nothing is left."""
    if not isinstance(params, dict):
        return None
    kept = {str(k): v for k, v in params.items()
            if isinstance(k, str) and len(k) <= MAX_TEXT and k != "search"
            and (v is None or isinstance(v, bool | int) or (isinstance(v, float) and math.isfinite(v))
                 or (isinstance(v, str) and len(v) <= MAX_TEXT))}
    return dict(list(kept.items())[:MAX_PARAMS]) or None


@cache
def shipped() -> tuple[Winner, ...]:
    """The portfolio that ships with the kit (none when its file is missing)."""
    if not PORTFOLIO_FILE.exists():
        return ()
    data = json.loads(PORTFOLIO_FILE.read_text(encoding="utf-8"))
    return tuple(Winner(e["service"], table, params, "portfolio") for e in data["entries"]
                 if (table := Table.of(e["table"])) and (params := clean(e["params"])))


def nearest(winners: Iterable[Winner], service: str, table: Table,
            limit: int = MAX_WARM_STARTS) -> list[Winner]:
    """The winners of ``service`` on the tables nearest ``table``, each configuration once; among equally near
    ones, the deployment's own runs first (they are tables like its own)."""
    ranked = sorted((w for w in winners if w.service == service),
                    key=lambda w: (round(table.distance(w.table), 6), w.source != "history"))
    chosen: list[Winner] = []
    for winner in ranked:
        if all(winner.params != c.params for c in chosen):
            chosen.append(winner)
        if len(chosen) == limit:
            break
    return chosen
