"""Agent A1, the data profiler: what a table holds, how good it is, and which column the user may want to predict.

Statistics that need every row (count, missing, mean, std, min, max; unique counts and top values too when the table
is in memory) cover all rows. The expensive parts (semantic sniffing, great-expectations checks, correlations,
near-identical columns, duplicate rows of very wide tables) run on a random sample of ``sample_rows`` rows, so a long
or wide table profiles in seconds. Delimited text above ``CHUNKED_BYTES`` is never loaded whole: one chunked pass
accumulates the full statistics and draws the sample.

Modules: table (reading and sampling), semantic (types), entities (entity numbers), columns (statistics), quality,
correlations, targets; common holds what they share.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import pandas as pd

from dagsmith.agents.profiler.ahead import known_ahead
from dagsmith.agents.profiler.columns import column_profile
from dagsmith.agents.profiler.common import S
from dagsmith.agents.profiler.correlations import as_numbers, listed_correlations, pearson_matrix
from dagsmith.agents.profiler.quality import (
    QUALITY_WEIGHTS,
    checked_for_duplicates,
    completeness_score,
    consistency_score,
    near_identical,
    uniqueness_score,
    weighted_harmonic_mean,
)
from dagsmith.agents.profiler.entities import entity_numbers
from dagsmith.agents.profiler.semantic import semantic_type
from dagsmith.agents.profiler.table import Table, profilable, streamed
from dagsmith.agents.profiler.targets import target_candidates, time_column
from dagsmith.agents.repeats import repeated_rows
from dagsmith.data.compression import compression, decompressed
from dagsmith.data.dictionary import describe, dictionary_for
from dagsmith.data.readers import read_table
from dagsmith.data.sniffing import ReadInfo, size_text, sniff
from dagsmith.models.profile import DatasetProfile, QualityScore

SAMPLE_ROWS = 100_000
CHUNKED_BYTES = 200 * 2**20


def profile_dataset(path: Path | str, *, sample_rows: int = SAMPLE_ROWS,
                    descriptions: Mapping[str, str] | None = None) -> DatasetProfile:
    """Read and profile a file, with its columns' descriptions (``descriptions`` given over the file's own dictionary,
    ``dagsmith.data.dictionary``)."""
    dictionary = dictionary_for(path, descriptions)  # a broken dictionary file fails before the table is read
    return describe(_profile_file(path, sample_rows), dictionary)


def _profile_file(path: Path | str, sample_rows: int) -> DatasetProfile:
    """Delimited text above ``CHUNKED_BYTES`` is streamed in chunks instead of loaded."""
    kind = compression(path)
    with decompressed(path) as plain:
        info = sniff(plain)
        if kind:
            unpacked = f"Decompressed from {kind}: {size_text(info.size_bytes)} of table."
            info = replace(info, notes=(unpacked, *info.notes))
        if info.format in ("csv", "tsv") and info.size_bytes > CHUNKED_BYTES:
            return _profile(streamed(plain, info, sample_rows), str(path), info)
        frame, info = read_table(plain, info=info)
        return profile_frame(frame, source=str(path), read_info=info, sample_rows=sample_rows)


def profile_frame(
    frame: pd.DataFrame,
    *,
    source: str = "<memory>",
    read_info: ReadInfo | None = None,
    total_rows: int | None = None,
    sample_rows: int = SAMPLE_ROWS,
    descriptions: Mapping[str, str] | None = None,
) -> DatasetProfile:
    """Profile a table in memory. ``total_rows`` is the size of the table ``frame`` was cut from, when larger."""
    frame = profilable(frame)
    sample = frame if len(frame) <= sample_rows else frame.sample(n=sample_rows, random_state=0)
    table = Table(sample=sample.reset_index(drop=True), full=frame, n_rows=max(total_rows or 0, len(frame)))
    return describe(_profile(table, source, read_info), descriptions or {})


def _profile(table: Table, source: str, info: ReadInfo | None) -> DatasetProfile:
    sample = table.sample
    stats = table.full if table.full is not None else sample
    columns = [column_profile(stats[name], semantic_type(sample[name], table.n_rows)) for name in sample.columns]
    entities = entity_numbers(sample, columns)
    columns = [column.model_copy(update={"semantic_type": S.ID}) if column.name in entities else column
               for column in columns]
    for column in columns:
        if column.name in table.moments:
            table.moments[column.name].apply(column)
    profiles = {column.name: column for column in columns}
    related = as_numbers(sample, profiles)
    correlation = pearson_matrix(related, profiles)
    groups = near_identical(related, correlation)
    checked = checked_for_duplicates(table)
    duplicates, checked_rows = int(checked.duplicated().sum()), len(checked)
    consistency, consistency_issues, skipped = consistency_score(sample, profiles)
    completeness, completeness_issues = completeness_score(columns)
    uniqueness, uniqueness_issues = uniqueness_score(duplicates, checked_rows, groups, len(columns))
    axes = {"completeness": completeness, "consistency": consistency, "uniqueness": uniqueness}
    candidates = target_candidates(columns, sample)
    time = time_column(columns)
    ahead = known_ahead(sample, columns, time)
    columns = [column.model_copy(update={"known_ahead": ahead[column.name]}) if column.name in ahead else column
               for column in columns]
    sampled = len(sample) < table.n_rows
    return DatasetProfile(
        source=source,
        format=info.format if info else "dataframe",
        encoding=info.encoding if info else None,
        delimiter=info.delimiter if info else None,
        n_rows=table.n_rows,
        n_columns=len(columns),
        sampled=sampled,
        sample_rows=len(sample) if sampled else None,
        columns=columns,
        duplicate_rows=duplicates,
        repeated_rows=repeated_rows(checked, [c.name for c in columns if c.semantic_type is S.ID]),
        near_identical_columns=groups,
        quality=QualityScore(
            **{axis: round(value, 4) for axis, value in axes.items()},
            overall=round(weighted_harmonic_mean(axes, QUALITY_WEIGHTS), 4),
            weights=QUALITY_WEIGHTS,
            issues=completeness_issues + consistency_issues + uniqueness_issues,
        ),
        correlations=listed_correlations(correlation, related, profiles, candidates),
        target_candidates=candidates,
        time_column=time,
        notes=_notes(table, info, checked_rows, skipped),
    )


def _notes(table: Table, info: ReadInfo | None, checked_rows: int, skipped: list[str]) -> list[str]:
    notes = []
    rows, sample = table.n_rows, len(table.sample)
    if table.full is None:
        notes.append(
            f"Read in chunks: counts, missing values, mean, std, min and max cover all {rows:,} rows; unique counts, "
            f"top values, date ranges, semantic types, quality checks, duplicate rows and correlations use a random "
            f"sample of {sample:,} rows."
        )
    elif len(table.full) < rows:
        notes.append(f"Statistics cover the first {len(table.full):,} of {rows:,} rows.")
    elif sample < rows:
        counted = "duplicate rows, " if checked_rows == sample else ""
        notes.append(
            f"Counts, missing values, unique counts, top values, mean, std, min and max cover all {rows:,} rows; "
            f"semantic types, quality checks, {counted}correlations and near-identical columns use a random sample "
            f"of {sample:,} rows."
        )
    if info and info.format in ("csv", "tsv") and not info.header:
        notes.append(f"No header row was detected; columns are named column_1 to column_{table.sample.shape[1]}.")
    if info:
        notes.extend(info.notes)
    if skipped:
        notes.append(f"Quality checks that could not run: {', '.join(skipped)}.")
    return notes
