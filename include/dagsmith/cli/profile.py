"""``dagsmith profile DATA``: what a dataset holds, how good it is, and what could be predicted from it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from dagsmith.agents.profiler import SAMPLE_ROWS, profile_dataset
from dagsmith.cli.output import console, fail, print_json, progress
from dagsmith.cli.plan import Columns, read_columns
from dagsmith.data.dictionary import DictionaryError
from dagsmith.data.sniffing import DatasetError
from dagsmith.models.profile import ColumnProfile, DatasetProfile

SHOWN_CANDIDATES = 5
SHOWN_CORRELATIONS = 10


def profile(
    data: Annotated[Path, typer.Argument(help="The table: CSV, TSV, Parquet, JSON, JSON lines or Excel.")],
    json: Annotated[bool, typer.Option("--json", help="Print the whole profile as JSON.")] = False,
    sample_rows: Annotated[
        int, typer.Option("--sample-rows", min=100, help="Rows sampled for the expensive parts on larger tables.")
    ] = SAMPLE_ROWS,
    columns: Columns = None,
) -> None:
    """Profile a dataset: schema, semantic types, statistics, quality, likely targets and correlations."""
    descriptions = read_columns(columns)
    progress(f"profiling {data} ...")
    try:
        result = profile_dataset(data, sample_rows=sample_rows, descriptions=descriptions)
    except (DatasetError, DictionaryError) as exc:  # a configuration error is main()'s to name as one
        fail(str(exc), code=2)
    if json:
        print_json(result)
        return
    _print_summary(result)


def _print_summary(result: DatasetProfile) -> None:
    delimiter = result.delimiter and f"delimiter {result.delimiter!r}"
    layout = ", ".join(filter(None, [result.format, result.encoding, delimiter]))
    shape = f"{result.n_rows:,} rows x {result.n_columns} columns"
    console.print(f"[bold]{escape(result.source)}[/]: {shape} ({layout})", highlight=False)
    quality = result.quality
    console.print(
        f"quality [bold]{quality.overall:.2f}[/]  completeness {quality.completeness:.2f}, "
        f"consistency {quality.consistency:.2f}, uniqueness {quality.uniqueness:.2f}",
        highlight=False,
    )
    for issue in quality.issues:
        console.print(f"  - {escape(issue)}", highlight=False)
    console.print(_columns_table(result.columns))
    if result.target_candidates:
        console.print(_candidates_table(result))
    if result.correlations:
        console.print(_correlations_table(result))
    if result.time_column:
        console.print(f"time column: {escape(result.time_column)}", highlight=False)
    for note in result.notes:
        console.print(f"[dim]{escape(note)}[/]", highlight=False)


def _columns_table(columns: list[ColumnProfile]) -> Table:
    described = any(column.description for column in columns)
    headers = ("column", "dtype", "semantic type", "missing", "unique", "mean / top value", "issues")
    table = Table(*headers, *(("description",) if described else ()), title="columns")
    for column in columns:
        table.add_row(
            escape(column.name), column.dtype, column.semantic_type.value, f"{column.missing_ratio:.1%}",
            f"{column.unique:,}", escape(_typical(column)), escape("; ".join(column.issues)),
            *((escape(column.description or ""),) if described else ()),
        )
    return table


def _typical(column: ColumnProfile) -> str:
    if column.mean is not None:
        return f"{column.mean:.4g}"
    if column.top_values:
        top = column.top_values[0]
        return f"{top.value[:30]} ({top.count:,})"
    return ""


def _candidates_table(result: DatasetProfile) -> Table:
    table = Table("column", "task", "score", "confidence", "reasons", title="target candidates")
    for candidate in result.target_candidates[:SHOWN_CANDIDATES]:
        task = candidate.suggested_task.value.replace("_", " ") if candidate.suggested_task else ""
        score, confidence = f"{candidate.score:.2f}", f"{candidate.confidence:.0%}"
        table.add_row(escape(candidate.column), task, score, confidence, escape("; ".join(candidate.reasons)))
    return table


def _correlations_table(result: DatasetProfile) -> Table:
    table = Table("a", "b", "method", "value", title="strongest correlations")
    for correlation in result.correlations[:SHOWN_CORRELATIONS]:
        table.add_row(escape(correlation.a), escape(correlation.b), correlation.method.replace("_", " "),
                      f"{correlation.value:+.3f}")
    return table
