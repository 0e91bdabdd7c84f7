"""The data profiler's contract (agent A1): what a dataset holds and how good it is."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field, PrivateAttr

from dagsmith.models.catalog import TaskType


class SemanticType(StrEnum):
    """What a column means, beyond its storage type (detected by heuristics over names and values)."""

    ID = "id"
    EMAIL = "email"
    PHONE = "phone"
    URL = "url"
    POSTAL_CODE = "postal_code"
    GEO = "geo"
    DATETIME = "datetime"
    BOOLEAN = "boolean"
    CATEGORICAL = "categorical"
    TEXT = "text"
    NUMERIC = "numeric"


class ValueCount(BaseModel):
    value: str
    count: int


class ColumnProfile(BaseModel):
    name: str
    dtype: str = Field(description="pandas dtype as read")
    semantic_type: SemanticType
    count: int = Field(description="non-missing values")
    missing: int
    missing_ratio: float
    unique: int = Field(description="distinct non-missing values (cardinality)")
    unique_ratio: float
    mean: float | None = None
    std: float | None = None
    min: float | str | None = None
    max: float | str | None = None
    not_numbers: int = Field(0, description="values of a numeric column stored as text that are not numbers (stray "
                                            "words such as 'n/a'); a pipeline reads them as missing")
    top_values: list[ValueCount] = Field(default_factory=list)
    issues: list[str] = Field(default_factory=list, description="e.g. 'constant', 'values out of range'")
    description: str | None = Field(None, description="what the column holds, from the data's dictionary "
                                                      "(dagsmith.data.dictionary)")
    known_ahead: str | None = Field(None, description="what makes the value known before its time comes, so that a "
                                    "forecast may use it: the part of the time column's calendar that decides it "
                                    "('month', 'day of week', 'year'), or 'series' for a column telling the series "
                                    "apart (or decided by one); None for a value measured with the time "
                                    "(dagsmith.agents.profiler.ahead)")


class QualityScore(BaseModel):
    """Three axes in [0, 1] and their weighted harmonic mean (one weak axis pulls the total down)."""

    completeness: float
    consistency: float
    uniqueness: float
    overall: float
    weights: dict[str, float]
    issues: list[str] = Field(default_factory=list, description="what lowered the score, readable")


class Correlation(BaseModel):
    a: str
    b: str
    method: str
    value: float


class TargetCandidate(BaseModel):
    """A column that could be what the user wants to predict: lambda1*name + lambda2*distribution + lambda3*temporal."""

    column: str
    score: float
    confidence: float = Field(description="score share among the candidates, in [0, 1]")
    name_score: float
    distribution_score: float
    temporal_score: float
    suggested_task: TaskType | None = None
    reasons: list[str] = Field(default_factory=list)


class RepeatedRows(BaseModel):
    """What tells copies of a record from rows that coincide by chance: chance repeats rows where rows crowd
    (others differ from them in one column only), while a copied record is as alone as any other row."""

    checked_rows: int
    rows: int = Field(description="rows repeating an earlier row in every column but the identifiers")
    isolated: int = Field(description="of those, rows no other row differs from in a single column")
    isolated_share: float = Field(
        description="share of the unrepeated rows no other row differs from in a single column")


class DatasetProfile(BaseModel):
    source: str
    format: str = Field(description="csv, tsv, parquet, json, jsonl or excel")
    encoding: str | None = None
    delimiter: str | None = None
    n_rows: int
    n_columns: int
    sampled: bool = Field(description="whether the expensive parts ran on a sample")
    sample_rows: int | None = None
    columns: list[ColumnProfile]
    duplicate_rows: int
    repeated_rows: RepeatedRows | None = Field(default=None, description="None when no row repeats another")
    near_identical_columns: list[list[str]] = Field(default_factory=list)
    quality: QualityScore
    correlations: list[Correlation] = Field(default_factory=list, description="strongest pairs first")
    target_candidates: list[TargetCandidate] = Field(default_factory=list, description="best first")
    time_column: str | None = None
    notes: list[str] = Field(default_factory=list)

    _by_name: tuple[list[ColumnProfile], dict[str, ColumnProfile]] | None = PrivateAttr(default=None)

    def column(self, name: str) -> ColumnProfile | None:
        """The column of that name, looked up in constant time (callers ask per column, on tables of thousands); the
        index is rebuilt when the list was replaced, as ``model_copy(update=...)`` does."""
        if self._by_name is None or self._by_name[0] is not self.columns:
            self._by_name = (self.columns, {c.name: c for c in reversed(self.columns)})
        return self._by_name[1].get(name)

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]
