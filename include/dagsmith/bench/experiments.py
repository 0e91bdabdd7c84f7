"""The benchmark's experiments: the five configurations of BENCHMARK.md and the variants its protocols need.

Each experiment runs in its own database and home, so execution history only accumulates from that
experiment's own runs (the learning curve is the ``full`` experiment in cohort order).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from dagsmith.models.plan import RankingMode


class Degradation(StrEnum):
    """How much of the authors' documentation is left (documentation-degradation protocol)."""

    NONE = "none"
    MILD = "mild"  # usage notes and caveats dropped
    MODERATE = "moderate"  # also parameter descriptions
    SEVERE = "severe"  # only name and category remain


@dataclass(frozen=True)
class Experiment:
    name: str
    mode: RankingMode
    manual: bool = False  # the task's reference pipeline instead of the recommender's
    degradation: Degradation = Degradation.NONE
    inject_faults: bool = False  # into 20% of runs (self-healing protocol)
    self_healing: bool = True

    @property
    def slug(self) -> str:
        return self.name.replace("/", "-")


#: The configurations of the published table.
CONFIGURATIONS = {e.name: e for e in [
    Experiment("full", RankingMode.FULL),
    Experiment("no-history", RankingMode.NO_HISTORY),
    Experiment("documentation", RankingMode.DOCUMENTATION),
    Experiment("semantic-only", RankingMode.SEMANTIC_ONLY),
    Experiment("manual", RankingMode.FULL, manual=True),
]}
#: Documentation degradation: code-grounded vs documentation-based analysis at three levels.
DEGRADATION = {e.name: e for level in (Degradation.MILD, Degradation.MODERATE, Degradation.SEVERE)
               for e in [Experiment(f"degraded-{level.value}/code", RankingMode.FULL, degradation=level),
                         Experiment(f"degraded-{level.value}/documentation", RankingMode.DOCUMENTATION,
                                    degradation=level)]}
#: Self-healing: the same injected failures, healed by substitution or only retried.
FAULTS = {e.name: e for e in [
    Experiment("faults/self-healing", RankingMode.FULL, inject_faults=True),
    Experiment("faults/retry-only", RankingMode.FULL, inject_faults=True, self_healing=False),
]}
EXPERIMENTS = {**CONFIGURATIONS, **DEGRADATION, **FAULTS}
