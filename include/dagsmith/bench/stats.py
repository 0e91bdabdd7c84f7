"""Summary statistics the benchmarks report."""

from __future__ import annotations


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0-1) by nearest rank, so small samples report a value that was measured."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]
