"""Successive halving between a search's candidates: a model that trails its rivals at equal time stops early.

Splitting a search's budget equally gives the weakest candidate as long as the strongest. Successive halving
gives every candidate a first share, then keeps only the best ``1 / KEEP`` of them for the next, and the best of
those for the next (Hyperband's usual factor of three: of a search's three candidates, the leader alone); here each
candidate checks itself at those rungs (a quarter and a half of its budget) against the candidates that finished
before it started (the pipeline hands their progress over as ``rivals``): at a rung it goes on only while it ranks
among those the rung keeps, each rival judged by the best score it had reached after the same number of seconds.
Candidates side by side race each other too, from their first configurations: each shows its progress while it
runs (``PROGRESS_FILE`` in its output folder), and the pipeline keeps handing every candidate the progress of the
others, running or finished, as ``RIVALS_FILE``, which it reads again at its next check. A model that is already
behind stops spending time whether the candidates run one after another (one CPU) or side by side.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dagsmith_kit.files import write_whole

#: Points of a candidate's budget at which it is compared with its rivals, and the factor each rung divides the
#: candidates going on by (at least the leader goes on).
RUNGS = (0.25, 0.5)
KEEP = 3
#: Progress points and rivals read at most: a rival's progress comes from its output, which is untrusted.
MAX_POINTS, MAX_RIVALS, MAX_NAME = 200, 8, 80
#: Where, in a running candidate's output folder, the pipeline hands over its rivals' progress so far (the ``rivals``
#: param's form, every rival, rewritten whole each time).
RIVALS_FILE = ".rivals.json"
#: Where, in its own output folder, a running candidate shows its progress so far (``{"progress": [...]}``, as the
#: finished search's ``search.json`` holds it), for the pipeline to hand to the candidates beside it.
PROGRESS_FILE = ".progress.json"

Progress = tuple[tuple[float, float], ...]  # (seconds since the search started, best score then), in time order


@dataclass(frozen=True)
class Rival:
    """Another candidate of the search: how its best validation score grew with time (so far, while it runs)."""

    name: str
    progress: Progress

    def best_at(self, seconds: float) -> float:
        """The best score it had reached ``seconds`` into its search (-inf before its first)."""
        return max((score for at, score in self.progress if at <= seconds), default=-math.inf)

    @classmethod
    def of(cls, raw: Any) -> Rival | None:
        """A rival as handed over in a search's params, or None when it does not hold up."""
        if not isinstance(raw, dict) or not isinstance(raw.get("progress"), list):
            return None
        points = []
        for point in raw["progress"][:MAX_POINTS]:
            if (isinstance(point, list | tuple) and len(point) == 2
                    and all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
                            for v in point) and point[0] >= 0):
                points.append((float(point[0]), float(point[1])))
        return cls(str(raw.get("name", "another model"))[:MAX_NAME], tuple(sorted(points))) if points else None


def show_progress(output: Path, progress: Iterable[tuple[float, float]]) -> None:
    """Write ``PROGRESS_FILE`` whole (a reader never sees half of it); a folder that does not take it only leaves
    the candidates beside this one racing it less."""
    with contextlib.suppress(OSError):
        write_whole(output / PROGRESS_FILE, json.dumps({"progress": [list(point) for point in progress]}))


def rivals_of(raw: Any) -> tuple[Rival, ...]:
    """The rivals a search's params name (anything malformed is left out: a rival can only make a search shorter)."""
    if not isinstance(raw, list):
        return ()
    return tuple(rival for rival in map(Rival.of, raw[:MAX_RIVALS]) if rival)


@dataclass
class Rungs:
    """Where a candidate stands against its rivals as its search goes on (``given``: the rivals its params named;
    ``handed``: the ``RIVALS_FILE`` the pipeline may write while the search runs; ``passed``: the rungs checked so
    far)."""

    budget_seconds: float
    given: tuple[Rival, ...]
    handed: Path | None = None
    passed: int = 0
    rivals: tuple[Rival, ...] = field(init=False)  # the given ones and those last handed over
    _read: tuple[int, int] | None = None  # the handed file's modification time and size when last read

    def __post_init__(self) -> None:
        self.rivals = self.given

    def behind(self, seconds: float, best: float, metric: str) -> str | None:
        """Why the search should stop ``seconds`` in with ``best`` so far, or None while it is among those the rung
        keeps (the best third at the first, the best ninth at the second; at least the leader).

        Checked between configurations: once a rung's time has passed, the candidate is compared at the time it
        has actually reached (a rival's score then), so a slow first configuration is not judged early."""
        self._take_handed()
        if not self.rivals or self.passed >= len(RUNGS) or seconds < RUNGS[self.passed] * self.budget_seconds:
            return None
        while self.passed < len(RUNGS) and seconds >= RUNGS[self.passed] * self.budget_seconds:
            self.passed += 1
        reached = ((rival.best_at(seconds), rival.name) for rival in self.rivals)
        ahead = sorted(((score, name) for score, name in reached if score > best), reverse=True)
        kept = math.ceil((len(self.rivals) + 1) / KEEP**self.passed)
        if len(ahead) < kept:
            return None
        leader, name = ahead[0]
        shown = f"{best:.4f}" if math.isfinite(best) else "none yet"
        return (f"successive halving: {seconds:.1f} s in, its best {metric} ({shown}) trailed {name}'s at the "
                f"same point ({leader:.4f}), so the rest of its budget was not spent")

    def _take_handed(self) -> None:
        """Take the rivals as last handed over, beside the given ones (read again only when the file changed: a
        running rival's progress grows; anything that does not hold up is left out, as in the params)."""
        if self.handed is None:
            return
        try:
            state = self.handed.stat()
            if (state.st_mtime_ns, state.st_size) == self._read:
                return
            self._read = (state.st_mtime_ns, state.st_size)
            raw = json.loads(self.handed.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        known = {rival.name for rival in self.given}
        self.rivals = (self.given + tuple(rival for rival in rivals_of(raw) if rival.name not in known))[:MAX_RIVALS]
