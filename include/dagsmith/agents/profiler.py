"""Agent A1, the data profiler: what a table holds, how good it is, and which column the user may want to predict.

Statistics that need every row (count, missing, mean, std, min, max; unique counts and top values too when the table
is in memory) cover all rows. The expensive parts (semantic sniffing, great-expectations checks, correlations,
near-identical columns, duplicate rows of very wide tables) run on a random sample of ``sample_rows`` rows, so a long
or wide table profiles in seconds. Delimited text above ``CHUNKED_BYTES`` is never loaded whole: one chunked pass
accumulates the full statistics and draws the sample.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes
from pandas.tseries.api import guess_datetime_format

from dagsmith.agents.repeats import repeated_rows
from dagsmith.data.compression import compression, decompressed
from dagsmith.data.readers import DatasetError, ReadInfo, count_rows, read_chunks, read_table, size_text, sniff
from dagsmith.models.catalog import TaskType
from dagsmith.models.profile import (
    ColumnProfile,
    Correlation,
    DatasetProfile,
    QualityScore,
    SemanticType,
    TargetCandidate,
    ValueCount,
)

SAMPLE_ROWS = 100_000
CHUNKED_BYTES = 200 * 2**20
CHUNK_ROWS = 250_000
#: Above this many cells, duplicate rows are counted on the sample: hashing every row of a very wide table is slow.
DUPLICATE_CELLS = 20_000_000
QUALITY_WEIGHTS = {"completeness": 0.4, "consistency": 0.3, "uniqueness": 0.3}
#: lambda1 (name), lambda2 (distribution), lambda3 (temporal) of the target score.
TARGET_WEIGHTS = (0.5, 0.35, 0.15)
MAX_CORRELATIONS = 20
SNIFF_VALUES = 1_000
#: Categorical columns with more levels are left out of Cramér's V and the correlation ratio (both inflate).
MAX_LEVELS = 50
#: Share of values that must lie within fences derived from the data: a few extreme but genuine values in a large
#: sample are expected, so they are reported as column issues without failing the check.
FENCE_MOSTLY = 0.999

S = SemanticType

# ---------------------------------------------------------------- vocabulary
ID_WORDS = {"id", "uuid", "guid"}
WEAK_ID_WORDS = {"key", "number", "no", "nr", "num"}  # only as the last word, and only for unique values
PHONE_WORDS = {"phone", "telephone", "tel", "mobile", "cell", "cellphone", "fax"}
POSTAL_WORDS = {"zip", "zipcode", "postcode", "postal", "postalcode", "plz"}
LATITUDE_WORDS = {"lat", "latitude"}
LONGITUDE_WORDS = {"lon", "lng", "longitude"}  # and 'long' alone: 'long_term_debt' is no coordinate
DATE_WORDS = {"date", "time", "timestamp", "datetime", "dt", "created", "updated", "modified", "day"}
PERCENT_WORDS = {"percent", "percentage", "pct", "perc"}
NONNEGATIVE_WORDS = {
    "age", "count", "counts", "qty", "quantity", "price", "cost", "amount", "salary", "income", "sales", "revenue",
    "weight", "height", "length", "width", "size", "area", "duration", "distance", "mass", "volume", "total",
    "charges", "tenure", "fee", "fees", "years", "months", "days", "hours", "minutes", "seconds", "mm", "cm", "kg",
}
#: Target-like names: exact names score the full weight, a word inside a longer name 70% of it.
TARGET_WORDS = {
    **dict.fromkeys(
        ["target", "label", "outcome", "response", "result", "churn", "churned", "fraud", "fraudulent", "default",
         "defaulted", "survived", "survival", "diagnosis", "species", "attrition", "progression", "cultivar",
         "status", "approved", "converted", "readmitted", "spam", "sentiment", "disease"], 1.0),
    **dict.fromkeys(
        ["price", "saleprice", "sales", "revenue", "cost", "charges", "value", "strength", "quality", "grade",
         "score", "rating", "income", "salary", "yield", "demand"], 0.75),
    **dict.fromkeys(["category", "segment", "group", "kind", "region", "variety"], 0.4),
}
#: Too generic inside longer names ('MS_SubClass', 'x'/'y' coordinates): they count only as the whole name.
EXACT_TARGET_WORDS = {"class", "y"}
OUTCOME_WORDS = {
    "next", "future", "final", "after", "later", "eventual", "subsequent", "outcome", "result", "response",
    "progression", "followup",
}

# ---------------------------------------------------------------- value patterns (GX regexes, so anchored)
EMAIL = r"(?i)^[\w.+'-]+@[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}$"
URL = r"(?i)^(?:(?:https?|ftp)://[^\s/$.?#][^\s]*|www\.[^\s.]+\.[^\s]+)$"
PHONE = r"^\+?[\d\s().\-/]{6,24}$"
SEPARATED_PHONE = r"^(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,4}\)[\s.-]?)?\d{2,5}(?:[\s.-]\d{2,5}){1,4}$"
POSTAL_CODE = r"(?i)^[a-z0-9][a-z0-9 -]{1,9}$"
NUMBER = r"^\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*$"
UUID = r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"
CODE = r"^(?=.*\d)(?=.*[a-zA-Z])[\w./:#-]{2,40}$"
DATE_SHAPE = (
    r"(?i)\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}|\d{1,2}:\d{2}|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b"
)
BOOLEAN_PAIRS = {
    frozenset(pair) for pair in
    [("yes", "no"), ("true", "false"), ("y", "n"), ("t", "f"), ("1", "0"), ("1.0", "0.0"), ("on", "off")]
}
#: The pattern each textual semantic type must match, and how to name a value that does not.
PATTERNS = {
    S.NUMERIC: (NUMBER, "numbers"), S.EMAIL: (EMAIL, "email addresses"), S.URL: (URL, "URLs"),
    S.PHONE: (PHONE, "phone numbers"), S.POSTAL_CODE: (POSTAL_CODE, "postal codes"),
}
NOT_FEATURES = {S.ID, S.TEXT, S.DATETIME, S.EMAIL, S.PHONE, S.URL}
NOT_TARGETS = NOT_FEATURES | {S.POSTAL_CODE, S.GEO}


# ---------------------------------------------------------------- public API
def profile_dataset(path: Path | str, *, sample_rows: int = SAMPLE_ROWS) -> DatasetProfile:
    """Read and profile a file; delimited text above ``CHUNKED_BYTES`` is streamed in chunks instead of loaded."""
    kind = compression(path)
    with decompressed(path) as plain:
        info = sniff(plain)
        if kind:
            unpacked = f"Decompressed from {kind}: {size_text(info.size_bytes)} of table."
            info = replace(info, notes=(unpacked, *info.notes))
        if info.format in ("csv", "tsv") and info.size_bytes > CHUNKED_BYTES:
            return _profile(_streamed(plain, info, sample_rows), str(path), info)
        frame, info = read_table(plain, info=info)
        return profile_frame(frame, source=str(path), read_info=info, sample_rows=sample_rows)


def profile_frame(
    frame: pd.DataFrame,
    *,
    source: str = "<memory>",
    read_info: ReadInfo | None = None,
    total_rows: int | None = None,
    sample_rows: int = SAMPLE_ROWS,
) -> DatasetProfile:
    """Profile a table in memory. ``total_rows`` is the size of the table ``frame`` was cut from, when larger."""
    frame = _profilable(frame)
    sample = frame if len(frame) <= sample_rows else frame.sample(n=sample_rows, random_state=0)
    table = _Table(sample=sample.reset_index(drop=True), full=frame, n_rows=max(total_rows or 0, len(frame)))
    return _profile(table, source, read_info)


# ---------------------------------------------------------------- what a profile is built from
@dataclass
class _Moments:
    """Count, missing, mean, variance and range of one column, merged chunk by chunk (Chan et al.'s update)."""

    rows: int = 0
    count: int = 0
    numeric: bool = True
    n: int = 0
    mean: float = 0.0
    m2: float = 0.0
    low: float = math.inf
    high: float = -math.inf

    def add(self, series: pd.Series) -> None:
        present = int(series.count())
        self.rows += len(series)
        self.count += present
        if not _is_numeric(series):
            self.numeric = self.numeric and present == 0  # an all-missing chunk says nothing about the type
            return
        values = series.dropna().astype(float)
        if values.empty:
            return
        n, mean = len(values), float(values.mean())
        delta, total = mean - self.mean, self.n + n
        self.m2 += float(((values - mean) ** 2).sum()) + delta**2 * self.n * n / total
        self.mean += delta * n / total
        self.n = total
        self.low, self.high = min(self.low, float(values.min())), max(self.high, float(values.max()))

    def apply(self, column: ColumnProfile) -> None:
        """Replace the sample's counts (and moments, for a column numeric in every chunk) with the full pass's."""
        column.count, column.missing = self.count, self.rows - self.count
        column.missing_ratio = _ratio(column.missing, self.rows)
        if self.numeric and self.n and column.mean is not None:
            column.mean, column.min, column.max = self.mean, self.low, self.high
            column.std = math.sqrt(self.m2 / (self.n - 1)) if self.n > 1 else None


@dataclass
class _Table:
    """All rows when they fit in memory (``full``), always a sample for the expensive parts."""

    sample: pd.DataFrame
    full: pd.DataFrame | None
    n_rows: int
    moments: dict[str, _Moments] = field(default_factory=dict)


def _profilable(frame: pd.DataFrame) -> pd.DataFrame:
    """String column names, no repeats, at least one cell; nested JSON values as text so they can be counted."""
    if frame.empty:
        raise DatasetError(f"the table has {len(frame)} rows and {frame.shape[1]} columns: nothing to profile.")
    frame = frame.rename(columns=str)
    repeated = sorted(set(frame.columns[frame.columns.duplicated()]))
    if repeated:
        raise DatasetError(f"the table has duplicate column names: {', '.join(map(repr, repeated))}; rename them.")
    nested = [name for name in frame.columns if frame[name].dtype == object and _holds_containers(frame[name])]
    return frame.assign(**{name: frame[name].map(_as_json) for name in nested}) if nested else frame


def _holds_containers(series: pd.Series) -> bool:
    """Lists or dicts among the values; ``infer_dtype`` rules out the usual all-text columns at C speed first."""
    if ptypes.infer_dtype(series, skipna=True) != "mixed":
        return False
    return bool(series.map(lambda value: isinstance(value, (list, dict, set))).any())


def _as_json(value: Any) -> Any:
    return json.dumps(value, default=str, sort_keys=True) if isinstance(value, (list, dict, set)) else value


def _streamed(path: Path, info: ReadInfo, sample_rows: int) -> _Table:
    """One pass over a large delimited file: full-pass moments per column and a proportional random sample."""
    fraction = min(1.0, sample_rows / max(count_rows(path, info) or 1, 1))
    rng = np.random.default_rng(0)
    moments: dict[str, _Moments] = {}
    parts = []
    for chunk in read_chunks(path, info, CHUNK_ROWS):
        for name in chunk.columns:
            moments.setdefault(name, _Moments()).add(chunk[name])
        parts.append(chunk.sample(frac=fraction, random_state=rng))
    sample = _profilable(pd.concat(parts, ignore_index=True))
    return _Table(sample=sample, full=None, n_rows=next(iter(moments.values())).rows, moments=moments)


def _profile(table: _Table, source: str, info: ReadInfo | None) -> DatasetProfile:
    sample = table.sample
    stats = table.full if table.full is not None else sample
    columns = [_column_profile(stats[name], _semantic_type(sample[name], table.n_rows)) for name in sample.columns]
    for column in columns:
        if column.name in table.moments:
            table.moments[column.name].apply(column)
    profiles = {column.name: column for column in columns}
    related = _as_numbers(sample, profiles)
    correlation = _pearson_matrix(related, profiles)
    groups = _near_identical(related, correlation)
    checked = _checked_for_duplicates(table)
    duplicates, checked_rows = int(checked.duplicated().sum()), len(checked)
    consistency, consistency_issues, skipped = _consistency(sample, profiles)
    completeness, completeness_issues = _completeness(columns)
    uniqueness, uniqueness_issues = _uniqueness(duplicates, checked_rows, groups, len(columns))
    axes = {"completeness": completeness, "consistency": consistency, "uniqueness": uniqueness}
    candidates = _target_candidates(columns, sample)
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
            overall=round(_weighted_harmonic_mean(axes, QUALITY_WEIGHTS), 4),
            weights=QUALITY_WEIGHTS,
            issues=completeness_issues + consistency_issues + uniqueness_issues,
        ),
        correlations=_correlations(correlation, related, profiles, candidates),
        target_candidates=candidates,
        time_column=_time_column(columns),
        notes=_notes(table, info, checked_rows, skipped),
    )


def _notes(table: _Table, info: ReadInfo | None, checked_rows: int, skipped: list[str]) -> list[str]:
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


# ---------------------------------------------------------------- semantic types
def _tokens(name: str) -> list[str]:
    """Lower-case words of a column name: 'MonthlyIncome', 'monthly_income' and 'Monthly income' agree."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", name)
    return re.findall(r"[a-z0-9]+", spaced.lower())


def _is_numeric(series: pd.Series) -> bool:
    return ptypes.is_numeric_dtype(series) and not ptypes.is_bool_dtype(series)


def _is_text(series: pd.Series) -> bool:
    return ptypes.is_object_dtype(series) or ptypes.is_string_dtype(series)


@dataclass(frozen=True)
class _Values:
    """What the semantic detectors look at: a column's non-missing values, a text view of a few, its name's words."""

    values: pd.Series
    text: pd.Series
    words: frozenset[str]
    last_word: str
    numeric: bool
    complete: bool
    n_unique: int
    n_rows: int

    @classmethod
    def of(cls, series: pd.Series, values: pd.Series, n_rows: int) -> _Values:
        few = values.sample(n=SNIFF_VALUES, random_state=0) if len(values) > SNIFF_VALUES else values
        words = _tokens(str(series.name)) or [""]
        return cls(
            values=values, text=few.astype(str).str.strip(), words=frozenset(words), last_word=words[-1],
            numeric=_is_numeric(series), complete=len(values) == len(series), n_unique=int(values.nunique()),
            n_rows=n_rows,
        )

    def share(self, pattern: str) -> float:
        """Share of the sniffed values that match ``pattern`` entirely."""
        return float(self.text.str.fullmatch(pattern).mean())

    @property
    def integral(self) -> bool:
        return self.numeric and _integral(self.values)

    @property
    def mostly_unique(self) -> bool:
        return self.n_unique >= 0.9 * len(self.values)


def _semantic_type(series: pd.Series, n_rows: int) -> SemanticType:
    """What a column means, from its storage type, its name and the shape of its values (detectors in order)."""
    values = series.dropna()
    if values.empty:
        return S.NUMERIC if _is_numeric(series) else S.CATEGORICAL
    if ptypes.is_bool_dtype(series):
        return S.BOOLEAN
    if ptypes.is_datetime64_any_dtype(series):
        return S.DATETIME
    if ptypes.is_timedelta64_dtype(series):
        return S.NUMERIC
    column = _Values.of(series, values, n_rows)
    for detect in (_patterned, _hinted, _textual_datetime, _separated_phone, _unhinted_id, _boolean):
        found = detect(column)
        if found:
            return found
    return _by_cardinality(column)


def _patterned(column: _Values) -> SemanticType | None:
    """Emails and URLs say what they are, whatever the column is called."""
    if column.numeric:
        return None
    return next((kind for kind in (S.EMAIL, S.URL) if column.share(PATTERNS[kind][0]) >= 0.9), None)


def _hinted(column: _Values) -> SemanticType | None:
    """Names that announce a type, confirmed by the values (codes, coordinates, phone numbers, identifiers)."""
    words = column.words
    if words & POSTAL_WORDS and (_postal_numbers(column) if column.numeric else column.share(POSTAL_CODE) >= 0.9):
        return S.POSTAL_CODE
    if column.numeric and (words & LATITUDE_WORDS or words & LONGITUDE_WORDS or words == {"long"}):
        limit = 90 if words & LATITUDE_WORDS else 180
        return S.GEO if column.values.between(-limit, limit).mean() >= 0.95 else None
    if words & PHONE_WORDS and _phone_share(column, PHONE) >= 0.9:
        return S.PHONE
    codes = (column.integral or not column.numeric) and column.n_unique > 2
    if codes and (words & ID_WORDS or (column.last_word in WEAK_ID_WORDS and column.mostly_unique)):
        return S.ID
    return None


def _postal_numbers(column: _Values) -> bool:
    return column.integral and bool(column.values.between(0, 99_999_999).all())


def _phone_share(column: _Values, pattern: str) -> float:
    """Share of values shaped like ``pattern`` with 6 to 15 digits, as phone numbers have."""
    digits = column.text.str.count(r"\d")
    return float((column.text.str.fullmatch(pattern) & digits.between(6, 15)).mean())


def _textual_datetime(column: _Values) -> SemanticType | None:
    if column.numeric or column.text.str.contains(DATE_SHAPE).mean() < 0.9:
        return None
    needed = 0.8 if column.words & DATE_WORDS else 0.9
    return S.DATETIME if _as_dates(column.text).notna().mean() >= needed else None


def _as_dates(series: pd.Series) -> pd.Series:
    """Text parsed as dates in one format guessed from the first value (guessing per value is 100x slower)."""
    if ptypes.is_datetime64_any_dtype(series):
        return series
    text = series.dropna().astype(str)
    if text.empty:
        return pd.Series(pd.NaT, index=series.index)
    return _parse_dates(text, _date_format(text))


def _date_format(text: pd.Series) -> str:
    """The month-first or day-first reading of the first value, whichever parses more of the first values."""
    guesses = {guess_datetime_format(text.iloc[0], dayfirst=dayfirst) for dayfirst in (False, True)} - {None}
    head = text.head(SNIFF_VALUES)
    return max(sorted(guesses), key=lambda fmt: _parse_dates(head, fmt).notna().sum(), default="mixed")


def _parse_dates(text: pd.Series, fmt: str) -> pd.Series:
    try:
        return pd.to_datetime(text, format=fmt, errors="coerce")
    except (ValueError, TypeError):  # mixed time zones
        return pd.Series(pd.NaT, index=text.index)


def _separated_phone(column: _Values) -> SemanticType | None:
    """Without a name hint, phone numbers must show their grouping ('+1 555-123-4567', '(030) 1234 5678')."""
    return S.PHONE if not column.numeric and _phone_share(column, SEPARATED_PHONE) >= 0.9 else None


#: Fewer rows than this and unique integers are as likely a measurement as a row number.
MIN_ID_ROWS = 20


def _unhinted_id(column: _Values) -> SemanticType | None:
    """Unique per row, and either a row numbering, UUIDs, or short codes of letters and digits ('7590-VHVEG')."""
    if not column.complete or column.n_unique < max(MIN_ID_ROWS, len(column.values)):
        return None
    if column.numeric:
        sequence = column.integral and column.values.max() - column.values.min() < column.n_rows
        return S.ID if sequence else None
    return S.ID if column.share(UUID) >= 0.99 or column.share(CODE) >= 0.99 else None


def _boolean_pair(text: pd.Series) -> frozenset[str] | None:
    """The two yes/no-like spellings that cover at least 98% of the values, if any."""
    counts = text.str.lower().value_counts()
    top = counts.head(2)
    pair = frozenset(top.index)
    return pair if pair in BOOLEAN_PAIRS and top.sum() >= 0.98 * counts.sum() else None


def _boolean(column: _Values) -> SemanticType | None:
    """Text may hold a few stray spellings (the consistency check reports them); numbers must be exactly 0 and 1."""
    if column.numeric and column.n_unique != 2:
        return None
    return S.BOOLEAN if _boolean_pair(column.text) else None


def _by_cardinality(column: _Values) -> SemanticType:
    """Numbers stay numeric (two-valued ones are categories); text is categorical unless many long, wordy values."""
    if column.numeric:
        return S.CATEGORICAL if column.n_unique == 2 else S.NUMERIC
    if column.share(NUMBER) >= 0.9:
        return S.NUMERIC
    size = len(column.values)
    if column.n_unique <= 0.05 * size or (column.n_unique <= MAX_LEVELS and column.n_unique <= 0.5 * size):
        return S.CATEGORICAL
    wordy = column.text.str.split().str.len().mean() >= 3 or column.text.str.len().mean() >= 40
    return S.TEXT if wordy else S.CATEGORICAL


# ---------------------------------------------------------------- column statistics
def _column_profile(series: pd.Series, semantic: SemanticType) -> ColumnProfile:
    counts = series.value_counts()
    counts = counts[counts > 0]  # categorical dtypes list unused categories
    count, rows = int(series.count()), len(series)
    column = ColumnProfile(
        name=str(series.name), dtype=str(series.dtype), semantic_type=semantic, count=count,
        missing=rows - count, missing_ratio=_ratio(rows - count, rows), unique=len(counts),
        unique_ratio=_ratio(len(counts), count),
        top_values=[ValueCount(value=str(value), count=int(n)) for value, n in counts.head(5).items()],
        **_summary(series, semantic),
    )
    column.issues = _column_issues(column)
    return column


def _summary(series: pd.Series, semantic: SemanticType) -> dict[str, Any]:
    """Mean, std, min and max of numbers (numeric text coerced); the range of dates as ISO strings."""
    if _is_numeric(series) or (semantic is S.NUMERIC and _is_text(series) and series.count()):
        numbers = series if _is_numeric(series) else pd.to_numeric(series, errors="coerce")
        stray = int(numbers.isna().sum() - series.isna().sum())
        moments = {key: _finite(getattr(numbers, key)()) for key in ("mean", "std", "min", "max")}
        return {"not_numbers": stray, **moments}
    if semantic is S.DATETIME:
        dates = _as_dates(series).dropna()
        return {"min": dates.min().isoformat(), "max": dates.max().isoformat()} if len(dates) else {}
    return {}


def _column_issues(column: ColumnProfile) -> list[str]:
    if column.count == 0:
        return ["all missing"]
    issues = ["constant"] if column.unique == 1 else []
    if column.missing_ratio > 0.5:
        issues.append(f"mostly missing ({_percent(column.missing_ratio)})")
    return issues


def _finite(value: Any) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _ratio(part: float, whole: float) -> float:
    return part / whole if whole else 0.0


# ---------------------------------------------------------------- quality: completeness and uniqueness
def _completeness(columns: list[ColumnProfile]) -> tuple[float, list[str]]:
    """1 - the share of missing cells: every cell counts the same, so one empty column among 10 costs 0.1."""
    cells = sum(column.count + column.missing for column in columns)
    gaps = sorted((column for column in columns if column.missing), key=lambda column: -column.missing_ratio)
    missing = sum(column.missing for column in gaps)
    if not missing:
        return 1.0, []
    worst = ", ".join(f"{column.name} {_percent(column.missing_ratio)}" for column in gaps[:3])
    where = f"{len(gaps)} column{'s' if len(gaps) > 1 else ''} ({worst})"
    return 1 - missing / cells, [f"{_percent(missing / cells)} of cells missing in {where}"]


def _checked_for_duplicates(table: _Table) -> pd.DataFrame:
    """The rows duplicates are counted on: all of them unless the table is very wide or streamed."""
    return table.full if table.full is not None and table.full.size <= DUPLICATE_CELLS else table.sample


def _near_identical(sample: pd.DataFrame, correlation: pd.DataFrame) -> list[list[str]]:
    """Groups of columns that carry the same information: |Pearson r| > 0.999, or equal up to relabelling.

    Relabelled copies ('yes'/'no' beside 1/0) share their factorised codes; columns with many distinct values are
    compared by their values instead, as any two all-distinct columns share codes 0..n-1.
    """
    pairs = [(a, b) for a, b, _ in _pairs(correlation, above=0.999)]
    by_content: dict[bytes, list[str]] = {}
    for name in sample.columns:
        series = sample[name]
        distinct = series.nunique()
        if distinct < 2:
            continue  # constants are reported as constant, not as copies of each other
        if distinct <= 0.5 * len(series):
            content = pd.factorize(series)[0]
        else:
            content = pd.util.hash_pandas_object(series, index=False).to_numpy()
        by_content.setdefault(hashlib.blake2b(content.tobytes(), digest_size=16).digest(), []).append(name)
    pairs += [(group[0], other) for group in by_content.values() for other in group[1:]]
    return _connected(pairs, list(sample.columns))


def _connected(pairs: list[tuple[str, str]], order: list[str]) -> list[list[str]]:
    """Pairs merged into groups (union-find), each group and the group list in column order."""
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        while parent.setdefault(name, name) != name:
            name = parent[name]
        return name

    for a, b in pairs:
        parent[root(a)] = root(b)
    groups: dict[str, list[str]] = {}
    for name in order:
        if name in parent:
            groups.setdefault(root(name), []).append(name)
    return [group for group in groups.values() if len(group) > 1]


def _uniqueness(duplicates: int, checked_rows: int, groups: list[list[str]], n_columns: int) -> tuple[float, list[str]]:
    """(1 - duplicate row share) x (1 - redundant column share): a copied column counts like a copied row."""
    redundant = sum(len(group) - 1 for group in groups)
    value = (1 - _ratio(duplicates, checked_rows)) * (1 - redundant / n_columns)
    share = _percent(_ratio(duplicates, checked_rows))
    issues = [f"{duplicates:,} duplicate rows ({share} of {checked_rows:,} checked)"] if duplicates else []
    issues += [f"near-identical columns: {' = '.join(group)}" for group in groups]
    return value, issues


def _weighted_harmonic_mean(axes: dict[str, float], weights: dict[str, float]) -> float:
    """sum(w) / sum(w / x): dominated by the weakest axis, and 0 as soon as one axis is 0."""
    if any(axes[axis] <= 0 for axis in weights):
        return 0.0
    return sum(weights.values()) / sum(weight / axes[axis] for axis, weight in weights.items())


# ---------------------------------------------------------------- quality: consistency with great-expectations
#: Lowest and highest plausible value (None: unbounded) and the share of values that must lie between them.
_Bounds = tuple[float | None, float | None, float]
#: Columns that get the costly per-column work (the plausibility suite of great-expectations, the association with
#: the target); wider tables get it on their first columns, and the profile says so. Without a bound, a table of
#: 10,000 columns took many minutes.
MAX_DETAILED_COLUMNS = 500


@dataclass(frozen=True)
class _Check:
    """One expectation on one column, and how to word its failure as a column issue."""

    column: str
    expectation: Any
    issue: Callable[[int, str], str]


def _consistency(sample: pd.DataFrame, profiles: dict[str, ColumnProfile]) -> tuple[float, list[str], list[str]]:
    """Share of plausibility expectations that pass on the sample, validated as one great-expectations suite.

    Every unexpected value becomes a column issue, even where a tolerant check passed; expectations that raised
    are left out of the share and returned as skipped.
    """
    import great_expectations.expectations as gxe

    checks = [check for name in sample.columns[:MAX_DETAILED_COLUMNS]
              if (check := _check_for(sample[name], profiles[name], gxe))]
    limited = ([f"plausibility checked on the first {MAX_DETAILED_COLUMNS:,} of {sample.shape[1]:,} columns"]
               if sample.shape[1] > MAX_DETAILED_COLUMNS else [])
    if not checks:
        return 1.0, limited, []
    results = _validate(sample[[check.column for check in checks]], checks)
    failed, skipped = [], []
    for check, result in zip(checks, results, strict=True):
        if result.exception_info.get("raised_exception"):
            skipped.append(check.column)
            continue
        unexpected = int(result.result.get("unexpected_count") or 0)
        if result.success and not unexpected:
            continue
        examples = ", ".join(_show(value) for value in result.result.get("partial_unexpected_list", [])[:3])
        issue = check.issue(unexpected, examples)
        profiles[check.column].issues.append(issue)
        if not result.success:
            failed.append(f"{check.column}: {issue}")
    evaluated = len(checks) - len(skipped)
    if not failed:
        return 1.0, limited, skipped
    listed = "; ".join(failed[:5]) + ("; ..." if len(failed) > 5 else "")
    return (1 - len(failed) / evaluated,
            [f"{len(failed)} of {evaluated} plausibility checks failed: {listed}", *limited], skipped)


def _validate(frame: pd.DataFrame, checks: list[_Check]) -> list[Any]:
    """Run the checks as one suite on one batch of an ephemeral context; results come back in suite order."""
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    batch = (
        context.data_sources.add_pandas("profiler")
        .add_dataframe_asset("table")
        .add_batch_definition_whole_dataframe("sample")
        .get_batch(batch_parameters={"dataframe": frame})
    )
    suite = gx.ExpectationSuite(name="plausibility", expectations=[check.expectation for check in checks])
    return batch.validate(suite, result_format={"result_format": "BASIC", "partial_unexpected_count": 3}).results


def _check_for(series: pd.Series, column: ColumnProfile, gxe: Any) -> _Check | None:
    """The expectation a column's semantic type implies, if any."""
    name, kind = column.name, column.semantic_type
    if column.count == 0:
        return None
    if kind is S.NUMERIC and _is_numeric(series):
        bounds = _plausible_range(series.dropna().astype(float), set(_tokens(name)))
        return _range_check(gxe, name, bounds, "") if bounds else None
    if kind is S.GEO:
        limit = 90 if set(_tokens(name)) & LATITUDE_WORDS else 180
        return _range_check(gxe, name, (-limit, limit, 1.0), " degrees")
    if kind in PATTERNS and _is_text(series):
        pattern, noun = PATTERNS[kind]
        expectation = gxe.ExpectColumnValuesToMatchRegex(column=name, regex=pattern)
        if kind is S.NUMERIC:
            return _Check(name, expectation, lambda n, e: f"mixed types ({n:,} values are not numbers, e.g. {e})")
        return _Check(name, expectation, lambda n, e: f"{n:,} values do not look like {noun} (e.g. {e})")
    if kind is S.BOOLEAN and not ptypes.is_bool_dtype(series):
        return _boolean_check(series, name, gxe)
    if kind is S.ID and column.unique_ratio >= 0.9:
        expectation = gxe.ExpectColumnValuesToBeUnique(column=name)
        return _Check(name, expectation, lambda n, e: f"repeated identifiers ({n:,} rows share an id, e.g. {e})")
    return None


def _range_check(gxe: Any, name: str, bounds: _Bounds, unit: str) -> _Check:
    low, high, mostly = bounds
    expectation = gxe.ExpectColumnValuesToBeBetween(column=name, min_value=low, max_value=high, mostly=mostly)
    span = f"[{_show(low) if low is not None else '-inf'}, {_show(high) if high is not None else 'inf'}]{unit}"
    return _Check(name, expectation, lambda n, e: f"values out of plausible range ({n:,} outside {span}, e.g. {e})")


def _boolean_check(series: pd.Series, name: str, gxe: Any) -> _Check | None:
    values = series.dropna()
    pair = _boolean_pair(values.astype(str).str.strip())
    if pair is None:
        return None
    allowed = [value for value in values.unique().tolist() if str(value).strip().lower() in pair]
    expectation = gxe.ExpectColumnValuesToBeInSet(column=name, value_set=allowed)
    spellings = " or ".join(sorted(pair))
    return _Check(name, expectation, lambda n, e: f"{n:,} values are not {spellings} (e.g. {e})")


def _plausible_range(values: pd.Series, words: set[str]) -> _Bounds | None:
    """Known ranges where the name and the data agree (ages 0-120, percentages 0-100, non-negative quantities),
    else robust fences from the data. Known ranges hold for every value, fences for ``FENCE_MOSTLY`` of them.
    None when neither bound can be judged."""
    known = [(0.0, 120.0)] if words & {"age"} else []
    known += [(0.0, 100.0)] if words & PERCENT_WORDS else []
    known += [(0.0, None)] if words & NONNEGATIVE_WORDS else []
    fitting = next((bounds for bounds in known if _share_within(values, *bounds) >= 0.95), None)
    if fitting and fitting[1] is not None:
        return fitting[0], fitting[1], 1.0
    low, high = _fences(values, nonnegative=fitting is not None or values.quantile(0.01) >= 0)
    return (low, high, FENCE_MOSTLY) if low is not None or high is not None else None


def _share_within(values: pd.Series, low: float, high: float | None) -> float:
    return float(values.between(low, high if high is not None else math.inf).mean())


def _fences(values: pd.Series, nonnegative: bool) -> tuple[float | None, float | None]:
    """The 1st-99th percentile range widened by its own width on each side: far enough out that heavy but genuine
    tails pass, close enough that typos, unit slips and sentinels fail. Non-negative data are fenced on a log scale
    (relative to their median, so units do not matter) and must not go below 0. No spread, no fence."""
    scale = float(values[values > 0].median()) if nonnegative and (values > 0).any() else 1.0
    scaled = np.log1p(values.clip(lower=0) / scale) if nonnegative else values
    low, high = scaled.quantile([0.01, 0.99])
    width = high - low
    if width == 0:
        return (0.0 if nonnegative else None), None
    if nonnegative:
        top = float(np.expm1(high + width) * scale)
        return 0.0, top if math.isfinite(top) else None
    return float(low - width), float(high + width)


def _show(value: Any) -> str:
    number = isinstance(value, (int, float, np.number)) and not isinstance(value, (bool, np.bool_))
    return f"{value:.4g}" if number else repr(str(value))


def _percent(share: float) -> str:
    """Shares as people read them: 37%, 2.4%, <0.1%."""
    if 0 < share < 0.001:
        return "<0.1%"
    return f"{share:.0%}" if share >= 0.1 or share == 0 else f"{share:.1%}"


# ---------------------------------------------------------------- correlations
def _as_numbers(sample: pd.DataFrame, profiles: dict[str, ColumnProfile]) -> pd.DataFrame:
    """Numbers stored as text, as numbers (stray words missing), so they correlate as what they are."""
    stored = [name for name in sample.columns if profiles[name].not_numbers or (
        profiles[name].semantic_type is S.NUMERIC and _is_text(sample[name]))]
    return sample.assign(**{name: pd.to_numeric(sample[name], errors="coerce") for name in stored}) if stored \
        else sample


def _pearson_matrix(sample: pd.DataFrame, profiles: dict[str, ColumnProfile]) -> pd.DataFrame:
    numeric = [
        name for name in sample.columns
        if _is_numeric(sample[name]) and profiles[name].unique > 1
        and profiles[name].semantic_type not in (S.ID, S.POSTAL_CODE)
    ]
    return sample[numeric].corr()


def _pairs(matrix: pd.DataFrame, above: float = -1.0, strongest: int | None = None) -> list[tuple[str, str, float]]:
    """Pairs of distinct columns whose |r| is over ``above`` (never NaN), only the ``strongest`` if given.

    Row by row, keeping at most ``strongest`` per row: a table of 10,000 columns has 50 million pairs, which must
    never be materialised as Python objects.
    """
    values, names = matrix.to_numpy(), list(matrix.columns)
    found: list[tuple[str, str, float]] = []
    for i in range(len(names) - 1):
        row = values[i, i + 1:]
        hits = np.flatnonzero(np.abs(row) > above)  # NaN compares false
        if strongest is not None and len(hits) > strongest:
            hits = hits[np.argpartition(-np.abs(row[hits]), strongest)[:strongest]]
        found.extend((names[i], names[i + 1 + j], float(row[j])) for j in hits)
        if strongest is not None and len(found) > 2 * strongest:
            found.sort(key=lambda pair: abs(pair[2]), reverse=True)
            del found[strongest:]
    return found


def _correlations(
    matrix: pd.DataFrame, sample: pd.DataFrame, profiles: dict[str, ColumnProfile], candidates: list[TargetCandidate]
) -> list[Correlation]:
    """Pearson among numbers, plus each feature's association with the best target candidate; strongest first."""
    found = [Correlation(a=a, b=b, method="pearson", value=round(r, 4))
             for a, b, r in _pairs(matrix, strongest=MAX_CORRELATIONS)]
    if candidates:
        found += _associations(sample, candidates[0].column, profiles)
    found.sort(key=lambda correlation: abs(correlation.value), reverse=True)
    return found[:MAX_CORRELATIONS]


def _associations(sample: pd.DataFrame, target: str, profiles: dict[str, ColumnProfile]) -> list[Correlation]:
    """Cramér's V between categories, the correlation ratio between categories and numbers (Pearson does the rest)."""
    y = sample[target]
    y_categorical = not _is_numeric(y)
    found = []
    for name in sample.columns[:MAX_DETAILED_COLUMNS]:
        x, profile = sample[name], profiles[name]
        x_categorical = not _is_numeric(x)
        if name == target or profile.semantic_type in NOT_FEATURES or not (x_categorical or y_categorical):
            continue
        if x_categorical and profile.unique > MAX_LEVELS:
            continue
        if x_categorical and y_categorical:
            value, method = _cramers_v(x, y), "cramers_v"
        else:
            categories, numbers = (y, x) if y_categorical else (x, y)
            value, method = _correlation_ratio(categories, numbers), "correlation_ratio"
        found.append(Correlation(a=name, b=target, method=method, value=round(value, 4)))
    return found


def _cramers_v(a: pd.Series, b: pd.Series) -> float:
    table = pd.crosstab(a, b).to_numpy(dtype=float)
    n, k = table.sum(), min(table.shape) - 1
    if n == 0 or k == 0:
        return 0.0
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / n
    chi2 = float(((table - expected) ** 2 / expected).sum())
    return math.sqrt(chi2 / (n * k))


def _correlation_ratio(categories: pd.Series, values: pd.Series) -> float:
    """eta: the share of the numbers' spread explained by the categories, as a correlation in [0, 1]."""
    frame = pd.DataFrame({"group": categories, "value": values}).dropna()
    if frame.empty:
        return 0.0
    mean = frame["value"].mean()
    groups = frame.groupby("group", observed=True)["value"].agg(["mean", "count"])
    between = float((groups["count"] * (groups["mean"] - mean) ** 2).sum())
    total = float(((frame["value"] - mean) ** 2).sum())
    return math.sqrt(between / total) if total > 0 else 0.0


# ---------------------------------------------------------------- target candidates
def _target_candidates(columns: list[ColumnProfile], sample: pd.DataFrame) -> list[TargetCandidate]:
    """Every plausible target, best first; confidence is the score's share among the top five."""
    names = {column.name.lower() for column in columns}
    last = max(len(columns) - 1, 1)
    scored = [_candidate(column, index / last, names, sample[column.name]) for index, column in enumerate(columns)]
    candidates = sorted((c for c in scored if c), key=lambda candidate: candidate.score, reverse=True)
    top = sum(candidate.score for candidate in candidates[:5])
    for candidate in candidates:
        candidate.confidence = round(_ratio(candidate.score, top), 4)
    return candidates


def _candidate(column: ColumnProfile, position: float, names: set[str], series: pd.Series) -> TargetCandidate | None:
    distribution, task, distribution_reason = _distribution_score(column, series)
    if not distribution:
        return None
    name, name_reason = _name_score(column.name, names)
    temporal, temporal_reason = _temporal_score(column.name, position)
    weight_name, weight_distribution, weight_temporal = TARGET_WEIGHTS
    return TargetCandidate(
        column=column.name,
        score=round(weight_name * name + weight_distribution * distribution + weight_temporal * temporal, 4),
        confidence=0.0,
        name_score=name,
        distribution_score=round(distribution, 4),
        temporal_score=round(temporal, 4),
        suggested_task=task,
        reasons=[reason for reason in (name_reason, distribution_reason, temporal_reason) if reason],
    )


def _name_score(name: str, names: set[str]) -> tuple[float, str]:
    """1 for names like 'target' or 'churn', 0.75 for quantities like 'price', 70% of that inside longer names."""
    words = _tokens(name)
    whole = "".join(words)
    if whole in EXACT_TARGET_WORDS and not (whole == "y" and "x" in names):  # x beside y are coordinates
        return 1.0, f"'{name}' is a conventional target name"
    if whole in TARGET_WORDS:
        return TARGET_WORDS[whole], f"'{name}' is a typical target name"
    inside = max((TARGET_WORDS.get(word, 0.0) for word in words), default=0.0) * 0.7
    question = 0.6 if len(words) > 1 and words[0] in ("is", "has") else 0.0
    if not (inside or question):
        return 0.0, ""
    if question >= inside:
        return question, f"'{name}' asks a yes/no question"
    return round(inside, 4), f"'{name}' contains a typical target word"


def _distribution_score(column: ColumnProfile, series: pd.Series) -> tuple[float, TaskType | None, str]:
    """Binary columns look most like targets, then few classes, then continuous numbers; ids, text, dates, constants
    not at all. Missing values scale the score down."""
    kind, levels = column.semantic_type, column.unique
    if kind in NOT_TARGETS or levels < 2:
        return 0.0, None, ""
    if levels == 2:
        score, task, reason = 1.0, TaskType.BINARY_CLASSIFICATION, f"two classes ({_class_mix(column)})"
    elif kind in (S.CATEGORICAL, S.BOOLEAN) or (_is_numeric(series) and levels <= 10 and _integral(series)):
        score = 0.9 if levels <= 10 else 0.8 if levels <= 20 else 0.5 if levels <= MAX_LEVELS else 0.1
        task, reason = TaskType.MULTICLASS_CLASSIFICATION, f"{levels} classes ({_class_mix(column)})"
    else:
        score, task, reason = 0.7, TaskType.REGRESSION, f"continuous numbers ({levels:,} distinct values)"
    if column.missing:
        reason += f"; {_percent(column.missing_ratio)} missing"
    return score * (1 - column.missing_ratio), task, reason


def _integral(series: pd.Series) -> bool:
    return bool((series.dropna() % 1 == 0).all())


def _class_mix(column: ColumnProfile) -> str:
    shown = ", ".join(f"{value.value} {_percent(_ratio(value.count, column.count))}" for value in column.top_values[:3])
    return shown + (", ..." if column.unique > 3 else "")


def _temporal_score(name: str, position: float) -> tuple[float, str]:
    """Outcomes come last (or, by another convention, first) and may be named for what happens later."""
    if set(_tokens(name)) & OUTCOME_WORDS:
        return 1.0, "the name describes an outcome"
    if position == 1:
        return 1.0, "last column"
    if position == 0:
        return 0.6, "first column"
    return round(0.3 * position, 4), ""


def _time_column(columns: list[ColumnProfile]) -> str | None:
    """The date/time column to order rows by: one named like a date first, then the one with most distinct values."""
    dates = [column for column in columns if column.semantic_type is S.DATETIME and column.count]
    best = max(dates, key=lambda column: (bool(set(_tokens(column.name)) & DATE_WORDS), column.unique), default=None)
    return best.name if best else None
