"""The benchmark task suite: real offline datasets, goals worded the way domain experts say them, and for each
task the pipeline an expert would build.

One task is one automation attempt of the evaluation (``BENCHMARK.md``): a dataset and a goal go in; the suite
also records what a careful analyst reads from the goal (task type and target), the ground truth held aside for
unsupervised tasks, and the reference pipeline. The reference maps each stage to the microservices an expert
accepts there, so component selection can be scored per stage. The first service listed for a stage is the
expert's own choice: in pipeline order, the first choices form the manual-construction baseline.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from dagsmith import datasets
from dagsmith.models.catalog import Stage, TaskType

SUITE_PATH = Path(__file__).with_name("tasks.yaml")
#: Fixed so every configuration and every rerun sees the same rows.
SAMPLE_SEED = 0

_CLASSIFICATION_METRICS = frozenset({"roc_auc", "f1", "accuracy", "balanced_accuracy", "log_loss", "precision",
                                     "recall"})
#: The quality metrics a task may ask for. Supervised and silhouette/anomaly_fraction names are the evaluators' and
#: detectors' own; the bench computes the others from the pipeline's output: adjusted_rand / normalized_mutual_info
#: (clusters against the held-aside labels), reconstruction_r2 (share of the standardised numeric input a linear map
#: from the components explains: the explained variance ratio for PCA, defined for any reducer), label_silhouette
#: (how well the components keep the labelled groups apart), anomaly_roc_auc / anomaly_average_precision (anomaly
#: scores against the rarer label, the anomalies), anomaly_precision / anomaly_recall (the flagged rows against those
#: anomalies: how many flags are right, how many anomalies are flagged) and statistics_match (EDA statistics equal a
#: reference within 1e-6).
METRICS: dict[TaskType, frozenset[str]] = {
    TaskType.BINARY_CLASSIFICATION: _CLASSIFICATION_METRICS,
    TaskType.MULTICLASS_CLASSIFICATION: _CLASSIFICATION_METRICS,
    TaskType.REGRESSION: frozenset({"rmse", "mae", "nrmse", "nmae", "r2"}),
    TaskType.CLUSTERING: frozenset({"adjusted_rand", "normalized_mutual_info", "silhouette"}),
    TaskType.DIMENSIONALITY_REDUCTION: frozenset({"reconstruction_r2", "label_silhouette"}),
    TaskType.ANOMALY_DETECTION: frozenset({"anomaly_roc_auc", "anomaly_average_precision", "anomaly_precision",
                                           "anomaly_recall", "anomaly_fraction"}),
    TaskType.EXPLORATORY_ANALYSIS: frozenset({"statistics_match"}),
}
#: Metrics that need ground truth: a task asking for them must hold labels aside.
LABELLED_METRICS = frozenset({"adjusted_rand", "normalized_mutual_info", "label_silhouette", "anomaly_roc_auc",
                              "anomaly_average_precision", "anomaly_precision", "anomaly_recall"})


class BenchTask(BaseModel):
    """One benchmark task, as written in ``tasks.yaml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    dataset: str
    rows: int | None = Field(default=None, gt=0, description="deterministic sample size; none means every row")
    drop: list[str] = Field(default_factory=list, description="columns removed before the task")
    goal: str = Field(min_length=1)
    task_type: TaskType
    target: str | None = None
    labels: str | None = Field(default=None, description="ground truth held aside from the pipeline's data")
    anomaly_share: float | None = Field(default=None, gt=0, lt=0.5, description=(
        "anomaly tasks: the rarer label class is sampled down to this share of the rows, so the anomalies are rare"))
    reference: dict[Stage, list[str]] = Field(min_length=1)
    metrics: list[str] = Field(min_length=1)

    @field_validator("dataset")
    @classmethod
    def _known_dataset(cls, name: str) -> str:
        if name not in datasets.DATASETS:
            raise ValueError(f"unknown dataset '{name}'")
        return name

    @field_validator("reference")
    @classmethod
    def _services_listed(cls, reference: dict[Stage, list[str]]) -> dict[Stage, list[str]]:
        for stage, services in reference.items():
            if not services or len(set(services)) != len(services):
                raise ValueError(f"stage '{stage}' needs a non-empty list of distinct services")
        return reference

    @model_validator(mode="after")
    def _consistent(self) -> BenchTask:
        supervised = self.task_type.supervised
        if supervised != (self.target is not None):
            raise ValueError("supervised tasks need a target and the others must not have one")
        if self.labels and (supervised or self.task_type is TaskType.EXPLORATORY_ANALYSIS):
            raise ValueError("labels are ground truth for unsupervised tasks only")
        if {self.target, self.labels} & set(self.drop):
            raise ValueError("the target and the labels cannot also be dropped")
        unknown = set(self.metrics) - METRICS[self.task_type]
        if unknown:
            raise ValueError(f"metrics {sorted(unknown)} do not apply to {self.task_type.value}")
        if not self.labels and LABELLED_METRICS & set(self.metrics):
            raise ValueError("metrics against ground truth need a labels column")
        if self.anomaly_share and not (self.labels and self.task_type is TaskType.ANOMALY_DETECTION):
            raise ValueError("anomaly_share applies to anomaly detection tasks with labels")
        return self

    def frame(self) -> pd.DataFrame:
        """The table the pipeline is given: the sampled rows without the dropped columns and the labels."""
        return self.frame_and_labels()[0]

    def frame_and_labels(self) -> tuple[pd.DataFrame, pd.Series | None]:
        """``frame()`` and ``ground_truth()`` from one load of the dataset."""
        table = self._table()
        if not self.labels:
            return table, None
        return table.drop(columns=[self.labels]), table[self.labels]

    def ground_truth(self) -> pd.Series | None:
        """The held-aside labels, row for row with ``frame()``; None when the task has none."""
        return self._table()[self.labels] if self.labels else None

    def _table(self) -> pd.DataFrame:
        """Dataset minus ``drop``, its anomalies made rare (``anomaly_share``), cut to ``rows`` by a seeded sample,
        stratified by the class column when there is one (the target of a classification, else the labels) so rare
        classes keep their share."""
        table = datasets.load(self.dataset).drop(columns=self.drop)
        if self.anomaly_share:
            table = _rarer_class_down_to(table, self.labels, self.anomaly_share)
        if self.rows is None or self.rows >= len(table):
            return table
        column = self.target if self.task_type.classification else self.labels
        strata = table[column].astype(str) if column else None
        if strata is not None and strata.value_counts().min() >= 2:
            from sklearn.model_selection import train_test_split

            sample, _ = train_test_split(table, train_size=self.rows, stratify=strata, random_state=SAMPLE_SEED)
        else:
            sample = table.sample(n=self.rows, random_state=SAMPLE_SEED)
        return sample.sort_index().reset_index(drop=True)


def _rarer_class_down_to(table: pd.DataFrame, labels: str, share: float) -> pd.DataFrame:
    """``table`` keeping every row of its other classes and a seeded sample of its rarer class, so that class is
    ``share`` of the rows (row order kept)."""
    classes = table[labels].astype(str)
    rare = classes == classes.value_counts().idxmin()
    keep = min(int(rare.sum()), max(1, round(share * (~rare).sum() / (1 - share))))
    sampled = table[rare].sample(n=keep, random_state=SAMPLE_SEED)
    return pd.concat([table[~rare], sampled]).sort_index().reset_index(drop=True)


def load_suite(path: Path | str | None = None) -> list[BenchTask]:
    """The tasks of a suite file (default: the packaged ``tasks.yaml``), validated; ids must be unique."""
    entries = yaml.safe_load(Path(path or SUITE_PATH).read_text(encoding="utf-8"))
    tasks = [BenchTask.model_validate(entry) for entry in entries]
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise ValueError(f"duplicate task id '{task.id}'")
        seen.add(task.id)
    return tasks
