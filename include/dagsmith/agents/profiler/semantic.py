"""Semantic types: what a column's values mean (id, email, phone, URL, postal or geo code, date/time, boolean,
categorical, free text, numeric), read from the values first and the words of the column's name second."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import pandas as pd
from pandas.api import types as ptypes
from pandas.tseries.api import guess_datetime_format

from dagsmith.agents.profiler.common import MAX_LEVELS, S, integral, is_numeric, tokens
from dagsmith.models.profile import SemanticType

SNIFF_VALUES = 1_000
ID_WORDS = {"id", "uuid", "guid"}
WEAK_ID_WORDS = {"key", "number", "no", "nr", "num"}  # only as the last word, and only for unique values
PHONE_WORDS = {"phone", "telephone", "tel", "mobile", "cell", "cellphone", "fax"}
POSTAL_WORDS = {"zip", "zipcode", "postcode", "postal", "postalcode", "plz"}
LATITUDE_WORDS = {"lat", "latitude"}
LONGITUDE_WORDS = {"lon", "lng", "longitude"}  # and 'long' alone: 'long_term_debt' is no coordinate
DATE_WORDS = {"date", "time", "timestamp", "datetime", "dt", "created", "updated", "modified", "day"}
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
        words = tokens(str(series.name)) or [""]
        return cls(
            values=values, text=few.astype(str).str.strip(), words=frozenset(words), last_word=words[-1],
            numeric=is_numeric(series), complete=len(values) == len(series), n_unique=int(values.nunique()),
            n_rows=n_rows,
        )

    def share(self, pattern: str) -> float:
        """Share of the sniffed values that match ``pattern`` entirely."""
        return float(self.text.str.fullmatch(pattern).mean())

    @property
    def integral(self) -> bool:
        return self.numeric and integral(self.values)

    @property
    def mostly_unique(self) -> bool:
        return self.n_unique >= 0.9 * len(self.values)


def semantic_type(series: pd.Series, n_rows: int) -> SemanticType:
    """What a column means, from its storage type, its name and the shape of its values (detectors in order)."""
    values = series.dropna()
    if values.empty:
        return S.NUMERIC if is_numeric(series) else S.CATEGORICAL
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
    return S.DATETIME if as_dates(column.text).notna().mean() >= needed else None


def as_dates(series: pd.Series) -> pd.Series:
    """Text parsed as dates in one format guessed from the first value (guessing per value is 100x slower)."""
    if ptypes.is_datetime64_any_dtype(series):
        return series
    text = series.dropna().astype(str)
    if text.empty:
        return pd.Series(pd.NaT, index=series.index)
    return _parse_dates(text, _date_format(text))


def _date_format(text: pd.Series) -> str:
    """The month-first or day-first reading of the first value, whichever parses more of the first values."""
    with warnings.catch_warnings():  # pandas warns that a year-first date ignores dayfirst: that is the point of both
        warnings.simplefilter("ignore", UserWarning)
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
#: The least share of the integers between its lowest and highest value a numbering unique per row holds: a patient
#: number running 1 to 3,007 over 2,982 rows is a numbering; unique measurements spread far wider.
NUMBERING_DENSITY = 0.95
#: The share of rows a column of names unique per row must fill to label the rows.
MIN_NAMED_SHARE = 0.95


def _unhinted_id(column: _Values) -> SemanticType | None:
    """Unique per row, and either a row numbering (a few numbers may be missing: rows left out of a registry), UUIDs,
    short codes of letters and digits ('7590-VHVEG'), or short names ('Barrow & Furness', 'BeBe Zahara Benet'): a
    name that no other row shares labels its row, and as a category it would teach a model nothing that holds for
    another row. Names may be missing on a few rows; wordy values are text, and numbers written as text are
    numbers."""
    if column.n_unique < max(MIN_ID_ROWS, len(column.values)):
        return None
    if column.numeric:
        span = column.values.max() - column.values.min() + 1 if column.integral else float("inf")
        return S.ID if column.complete and span <= column.n_rows / NUMBERING_DENSITY else None
    if column.complete and (column.share(UUID) >= 0.99 or column.share(CODE) >= 0.99):
        return S.ID
    named = (len(column.values) >= MIN_NAMED_SHARE * column.n_rows and not _wordy(column)
             and not _numbers_with_stray_words(column))
    return S.ID if named else None


def boolean_pair(text: pd.Series) -> frozenset[str] | None:
    """The two yes/no-like spellings that cover at least 98% of the values, if any."""
    counts = text.str.lower().value_counts()
    top = counts.head(2)
    pair = frozenset(top.index)
    return pair if pair in BOOLEAN_PAIRS and top.sum() >= 0.98 * counts.sum() else None


def _boolean(column: _Values) -> SemanticType | None:
    """Text may hold a few stray spellings (the consistency check reports them); numbers must be exactly 0 and 1."""
    if column.numeric and column.n_unique != 2:
        return None
    return S.BOOLEAN if boolean_pair(column.text) else None


def _numbers_with_stray_words(column: _Values) -> bool:
    """Text that is numbers but for a few words (read as missing values), whatever the words: 90% of the values, or
    of the distinct values, parse as numbers. Distinct values count because one word written on many rows ('three'
    on 50 of 450) is still one stray word among hundreds of numbers, not 300 classes."""
    parsed = column.text.str.fullmatch(NUMBER)
    distinct = column.text.nunique()
    return parsed.mean() >= 0.9 or column.text[parsed].nunique() >= 0.9 * distinct


def _by_cardinality(column: _Values) -> SemanticType:
    """Numbers stay numeric (two-valued ones are categories); text is categorical unless many long, wordy values."""
    if column.numeric:
        return S.CATEGORICAL if column.n_unique == 2 else S.NUMERIC
    if _numbers_with_stray_words(column):
        return S.NUMERIC
    size = len(column.values)
    if column.n_unique <= 0.05 * size or (column.n_unique <= MAX_LEVELS and column.n_unique <= 0.5 * size):
        return S.CATEGORICAL
    return S.TEXT if _wordy(column) else S.CATEGORICAL


def _wordy(column: _Values) -> bool:
    """Values of three words or 40 characters on average: prose, not a name or a category."""
    return bool(column.text.str.split().str.len().mean() >= 3 or column.text.str.len().mean() >= 40)
