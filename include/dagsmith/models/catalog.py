"""Contracts of the catalog: what an upload claims, what analysis finds, what validation and search return."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field


class Category(StrEnum):
    """The coarse category an uploader picks in the manifest."""

    PREPROCESSING = "preprocessing"
    MODELLING = "modelling"
    EVALUATION = "evaluation"
    VISUALISATION = "visualisation"
    UTILITY = "utility"


class Stage(StrEnum):
    """A pipeline stage a microservice can fill; analysis infers these from the code."""

    LOADING = "loading"
    VALIDATION = "validation"
    DEDUPLICATION = "deduplication"
    TYPE_CONVERSION = "type_conversion"
    COLUMN_FILTERING = "column_filtering"
    IMPUTATION = "imputation"
    OUTLIER_HANDLING = "outlier_handling"
    SPLITTING = "splitting"
    ENCODING = "encoding"
    SCALING = "scaling"
    FEATURE_SELECTION = "feature_selection"
    FEATURE_ENGINEERING = "feature_engineering"
    MODELLING = "modelling"
    CLUSTERING = "clustering"
    DIMENSIONALITY_REDUCTION = "dimensionality_reduction"
    ANOMALY_DETECTION = "anomaly_detection"
    EVALUATION = "evaluation"
    EXPLANATION = "explanation"
    EDA = "eda"
    VISUALISATION = "visualisation"
    REPORTING = "reporting"


class TaskType(StrEnum):
    BINARY_CLASSIFICATION = "binary_classification"
    MULTICLASS_CLASSIFICATION = "multiclass_classification"
    REGRESSION = "regression"
    CLUSTERING = "clustering"
    DIMENSIONALITY_REDUCTION = "dimensionality_reduction"
    ANOMALY_DETECTION = "anomaly_detection"
    EXPLORATORY_ANALYSIS = "exploratory_analysis"
    TIME_SERIES_FORECASTING = "time_series_forecasting"

    @property
    def supervised(self) -> bool:
        """Learns a target from labelled rows (and is judged against a trivial predictor of it)."""
        return self in SUPERVISED_TASKS

    @property
    def classification(self) -> bool:
        return self in CLASSIFICATION_TASKS


#: The task families, defined once: every other module asks ``TaskType.supervised`` / ``.classification``.
CLASSIFICATION_TASKS = (TaskType.BINARY_CLASSIFICATION, TaskType.MULTICLASS_CLASSIFICATION)
SUPERVISED_TASKS = (*CLASSIFICATION_TASKS, TaskType.REGRESSION, TaskType.TIME_SERIES_FORECASTING)


class AnalysisMode(StrEnum):
    CODE = "code"
    DOCUMENTATION = "documentation"


class Manifest(BaseModel):
    """What the uploader claims. Every field but the name may be missing, stale or wrong."""

    name: str
    description: str = ""
    category: str = ""
    keywords: list[str] = Field(default_factory=list)
    python_version: str = ""
    author: str = ""


class Parameter(BaseModel):
    name: str
    type: str = "any"
    default: Any = None
    required: bool = False
    description: str = ""


class Tags(BaseModel):
    """What a service's code needs and does, as typed facts (in the manner of scikit-learn's estimator tags).

    The recommender and the builder read these through ``agents.compatibility``; an analysis' ``capabilities``
    and ``requirements_on_input`` are the same facts as sentences for people.
    """

    needs_target: bool = False
    needs_split: bool = Field(False, description="reads the train and test tables")
    needs_model: bool = Field(False, description="reads a trained model or predictions an earlier step wrote")
    rejects_missing: bool = Field(False, description="refuses input with missing values")
    handles_missing: bool = False
    numeric_only: bool = Field(False, description="fails on text columns")
    native_categorical: bool = Field(False, description="splits on categories without encoding")
    encodes_internally: bool = Field(False, description="a model that encodes text columns inside itself")
    scales_internally: bool = False
    fits_on_train: bool = Field(False, description="learns on the training table, applies to every table")
    shuffles_rows: bool = Field(False, description="divides rows at random (a random split or shuffled folds)")
    orders_by_time: bool = Field(False, description="orders rows by the table's time column")
    keeps_groups: bool = Field(False, description="keeps the rows of one group (a customer, a patient) together")
    lags_target: bool = Field(False, description="adds the target's earlier values as features (a forecast's past)")
    metrics: list[str] = Field(default_factory=list, description="metrics its code computes (r2, roc_auc, ...)")
    produces_model: bool = False
    produces_predictions: bool = False
    produces_probabilities: bool = False
    produces_metrics: bool = False
    produces_plots: bool = False
    writes_report: bool = False
    limits: dict[str, Any] = Field(default_factory=dict, description="max_rows, max_columns, max_clusters defaults")
    formats: list[str] = Field(default_factory=list, description="raw file formats it reads (loading)")
    analyses: list[str] = Field(default_factory=list, description="exploratory analyses its code does")
    strength: float | None = Field(None, description="its strongest estimator's usual strength on tabular data")

    @property
    def max_rows(self) -> int | None:
        limit = self.limits.get("max_rows")
        return limit if isinstance(limit, int) else None


class Analysis(BaseModel):
    """What dagsmith understands a microservice to do: derived from code, or from its docs only."""

    mode: AnalysisMode
    summary: str = Field(description="one sentence: what the service does")
    description: str = Field(description="a paragraph, the text that is embedded for search")
    stages: list[Stage] = Field(description="stages it can fill, the main one first")
    task_types: list[TaskType] = Field(default_factory=list, description="tasks it fits; empty means any")
    capabilities: list[str] = Field(default_factory=list)
    requirements_on_input: list[str] = Field(default_factory=list, description="what the input must satisfy")
    tags: Tags = Field(default_factory=Tags, description="the capabilities and requirements, typed")
    inputs: list[str] = Field(default_factory=list, description="bundle files or formats read")
    outputs: list[str] = Field(default_factory=list, description="bundle files written")
    parameters: list[Parameter] = Field(default_factory=list)
    libraries: list[str] = Field(default_factory=list)
    algorithms: list[str] = Field(default_factory=list, description="estimators and functions it relies on")
    use_cases: list[str] = Field(default_factory=list)
    security_notes: list[str] = Field(default_factory=list)
    analyzer: str
    analyzer_version: str
    analyzed_at: datetime


class Finding(BaseModel):
    """One reason a validation or scan raised; ``blocking`` findings reject the upload."""

    check: str
    message: str
    file: str | None = None
    line: int | None = None
    blocking: bool = True

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}: " if self.file and self.line else (f"{self.file}: " if self.file else "")
        return f"[{self.check}] {where}{self.message}"


class UploadOutcome(StrEnum):
    ADDED = "added"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    REJECTED = "rejected"


class UploadResult(BaseModel):
    name: str
    outcome: UploadOutcome
    version_hash: str | None = None
    findings: list[Finding] = Field(default_factory=list)
    analysis: Analysis | None = None


class SearchHit(BaseModel):
    name: str
    score: float = Field(description="cosine similarity between query and service, plus up to 0.1 for the "
                                     "query's words in the service's name and summary")
    category: str
    summary: str
    stages: list[Stage]


class ServiceDetail(BaseModel):
    """Everything the catalog knows about one microservice (``dagsmith catalog show``)."""

    name: str
    category: str
    version_hash: str
    uploaded_at: datetime
    origin: str
    manifest: Manifest
    code_analysis: Analysis | None
    documentation_analysis: Analysis | None
    requirements: list[str]
