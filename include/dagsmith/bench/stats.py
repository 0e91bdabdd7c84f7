"""Summary statistics the benchmarks report, and how they are written in their Markdown tables."""

from __future__ import annotations

import statistics


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0-1) by nearest rank, so small samples report a value that was measured."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def rate_of(flags: list[bool]) -> float | None:
    return round(sum(flags) / len(flags), 4) if flags else None


def mean(values: list[float]) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


def figure(value: float | None, percent: bool = True) -> str:
    if value is None:
        return "–"
    return f"{value * 100:.1f}%" if percent else f"{value:g}"


def table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])
