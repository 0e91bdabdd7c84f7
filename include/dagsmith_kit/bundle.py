"""The bundle: the folder of data that flows along one edge of a pipeline.

The layout is documented in docs/bundle-format.md. This module is the single implementation of it,
used by microservices (to read and write) and by dagsmith (to build the first bundle and to check
bundles between steps), so both sides always agree on what a bundle is.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from dagsmith_kit.files import write_whole

FORMAT_VERSION = 1
META_FILE = "bundle.json"
MODEL_FILE = "model.joblib"
#: What scoring new rows needs to know about the model (kind, features, classes, anomaly threshold): plain JSON, so
#: dagsmith can read it without unpickling the model.
MODEL_INFO_FILE = "model.json"
PREDICTIONS_FILE = "predictions.parquet"
METRICS_FILE = "metrics.json"
#: A blend of models a modelling search handed on (``dagsmith_kit.ensemble``): members' files, features, weights.
ENSEMBLE_FILE = "ensemble.json"
MEMBERS_DIR = "members"
REPORT_FILE = "report.md"
ARTIFACTS_DIR = "artifacts"
SOURCE_PREFIX = "source"
#: Table names a bundle may hold: ``data`` before a split, ``train``/``test`` after one.
TABLE_NAMES = ("data", "train", "test")
#: The task types whose target is a quantity.
FORECAST_TASK = "time_series_forecasting"
NUMBER_TASKS = ("regression", FORECAST_TASK)
#: How predictions.parquet names a class's probability column: ``proba_<label>``.
PROBA_PREFIX = "proba_"


def probability_columns(predictions: pd.DataFrame) -> list[str]:
    """A predictions frame's ``proba_<label>`` columns, in the model's class order (none for a regressor)."""
    return [c for c in predictions.columns if str(c).startswith(PROBA_PREFIX)]


def probabilities_by_label(predictions: pd.DataFrame) -> tuple[list[str], pd.DataFrame]:
    """The class labels of the ``proba_<label>`` columns and those columns, in the labels' order as text: the order
    scikit-learn's log loss, Brier score and one-vs-rest ROC AUC take probabilities of text labels to be in. A
    model's own order is not it for numbered classes (2 before 10), and probabilities scored in that order are
    scored as other classes'."""
    columns = sorted(probability_columns(predictions))
    return [c.removeprefix(PROBA_PREFIX) for c in columns], predictions[columns]


def prediction_frame(model: Any, X: pd.DataFrame, classes: list | None = None) -> pd.DataFrame:
    """A fitted model's predictions for the rows of ``X``, shaped like predictions.parquet: ``prediction`` and,
    from a classifier that gives probabilities, one ``proba_<label>`` column per class of ``classes`` (by default
    its own; a class the model never saw gets probability 0)."""
    frame = pd.DataFrame({"prediction": model.predict(X)})
    if hasattr(model, "predict_proba") and hasattr(model, "classes_"):
        proba = pd.DataFrame(model.predict_proba(X), columns=list(model.classes_))
        for label in proba.columns if classes is None else classes:
            frame[f"{PROBA_PREFIX}{label}"] = proba[label].to_numpy() if label in proba else 0.0
    return frame


def _plain(value: Any) -> Any:
    """numpy scalars as the Python number they hold (ints stay ints)."""
    return value.item() if hasattr(value, "item") else float(value)


class BundleError(Exception):
    """A bundle does not follow the format (missing table, unknown target, malformed metadata)."""


@dataclass
class Bundle:
    """A bundle folder plus its parsed ``bundle.json``."""

    path: Path
    meta: dict[str, Any]

    # ---------------------------------------------------------------- opening and creating
    @classmethod
    def open(cls, path: str | Path) -> Bundle:
        path = Path(path)
        meta_path = path / META_FILE
        if not meta_path.is_file():
            raise BundleError(f"{path} is not a bundle: {META_FILE} is missing")
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise BundleError(f"{meta_path} is not valid JSON: {exc}") from exc
        if not isinstance(meta, dict):
            raise BundleError(f"{meta_path} must hold a JSON object")
        return cls(path, meta)

    @classmethod
    def create(
        cls,
        path: str | Path,
        table: pd.DataFrame | None = None,
        *,
        target: str | None = None,
        task_type: str | None = None,
        id_columns: list[str] | None = None,
        time_column: str | None = None,
        excluded_columns: list[str] | None = None,
    ) -> Bundle:
        """Create a new bundle, optionally holding ``table`` as ``data.parquet``."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        bundle = cls(
            path,
            {
                "format_version": FORMAT_VERSION,
                "task_type": task_type,
                "target": target,
                "id_columns": list(id_columns or []),
                "time_column": time_column,
                "excluded_columns": list(excluded_columns or []),
                "lineage": [],
            },
        )
        if table is not None:
            bundle.write_table("data", table)
        bundle.save_meta()
        return bundle

    def save_meta(self) -> None:
        write_whole(self.path / META_FILE, json.dumps(self.meta, indent=2, default=str))

    # ---------------------------------------------------------------- roles
    @property
    def target(self) -> str | None:
        return self.meta.get("target")

    @property
    def task_type(self) -> str | None:
        return self.meta.get("task_type")

    @property
    def forecasts(self) -> bool:
        """A forecast: the target's rows are ordered in time, and only what is known ahead may be learnt from."""
        return self.task_type == FORECAST_TASK

    @property
    def predicts_numbers(self) -> bool:
        """A regression, or a forecast (a regression on rows ordered in time): the target is a quantity."""
        return self.task_type in NUMBER_TASKS

    @property
    def id_columns(self) -> list[str]:
        return list(self.meta.get("id_columns") or [])

    @property
    def group_column(self) -> str | None:
        """The column whose groups (a patient's visits) the split kept on one side, if the split was by group."""
        return self.meta.get("group_column")

    @property
    def excluded_columns(self) -> list[str]:
        """Columns the person ruled out of the analysis ("without the size column"): never features."""
        return list(self.meta.get("excluded_columns") or [])

    @property
    def time_column(self) -> str | None:
        return self.meta.get("time_column")

    def require_target(self) -> str:
        """The target column name; a clear error when the pipeline has none."""
        if not self.target:
            raise BundleError("this step needs a target column, but the bundle names none")
        return self.target

    # ---------------------------------------------------------------- tables
    def table_names(self) -> list[str]:
        return [name for name in TABLE_NAMES if (self.path / f"{name}.parquet").is_file()]

    def is_split(self) -> bool:
        return (self.path / "train.parquet").is_file() and (self.path / "test.parquet").is_file()

    def table(self, name: str) -> pd.DataFrame:
        file = self.path / f"{name}.parquet"
        if not file.is_file():
            raise BundleError(f"the bundle has no '{name}' table (has: {self.table_names() or 'none'})")
        return pd.read_parquet(file)

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table: ``{'train': ..., 'test': ...}`` after a split, else ``{'data': ...}``."""
        names = ["train", "test"] if self.is_split() else ["data"]
        return {name: self.table(name) for name in names}

    def check_tables(self) -> None:
        """Refuse a bundle no step can work on: a table without rows, or a target the tables do not hold.

        Read from the files' metadata (no table is loaded), so every service checks its input before it starts.
        """
        import pyarrow.parquet as pq

        for name in self.table_names():
            metadata = pq.read_metadata(self.path / f"{name}.parquet")
            if metadata.num_rows == 0:
                raise BundleError(f"the {name} table has no rows: there is nothing to work on")
            if self.target and self.target not in metadata.schema.names:
                raise BundleError(f"the {name} table has no target column '{self.target}'")

    def fit_table(self) -> pd.DataFrame:
        """The table a transformer or model learns from: ``train`` after a split, else ``data``."""
        return self.table("train" if self.is_split() else "data")

    def write_table(self, name: str, frame: pd.DataFrame) -> None:
        if name not in TABLE_NAMES:
            raise BundleError(f"unknown table name '{name}'; use one of {', '.join(TABLE_NAMES)}")
        frame = frame.copy()
        frame.columns = [str(c) for c in frame.columns]
        frame.to_parquet(self.path / f"{name}.parquet", index=False)

    def remove_table(self, name: str) -> None:
        (self.path / f"{name}.parquet").unlink(missing_ok=True)

    def feature_columns(self, frame: pd.DataFrame, *, numeric: bool | None = None) -> list[str]:
        """Columns that are features: not the target, not an id column, not a time column of raw timestamps
        (it orders the rows; a datetime extractor turns it into numeric parts and keeps it for ordering).

        ``numeric=True`` keeps numeric (and boolean) columns, ``numeric=False`` keeps the others.
        """
        excluded = set(self.id_columns) | set(self.excluded_columns) | ({self.target} if self.target else set())
        time = self.time_column
        if time in frame.columns and not pd.api.types.is_numeric_dtype(frame[time]):
            excluded.add(time)
        columns = [c for c in frame.columns if c not in excluded]
        if numeric is None:
            return columns
        is_num = {c: pd.api.types.is_numeric_dtype(frame[c]) for c in columns}
        return [c for c in columns if is_num[c] == numeric]

    # ---------------------------------------------------------------- the raw source file
    def source_file(self) -> Path | None:
        """The raw dataset file a loader converts (``source.<ext>``), if the bundle holds one."""
        name = self.meta.get("source")
        return self.path / name if name else None

    def add_source(self, file: str | Path) -> Path:
        file = Path(file)
        name = f"{SOURCE_PREFIX}{''.join(file.suffixes[-2:]) or '.csv'}"
        shutil.copyfile(file, self.path / name)
        self.meta["source"] = name
        self.meta["source_name"] = file.name
        self.save_meta()
        return self.path / name

    # ---------------------------------------------------------------- models, predictions, metrics
    def save_model(self, model: Any, info: dict[str, Any] | None = None) -> None:
        """Write ``model.joblib`` and ``model.json`` (``info`` beside the model's ``features`` and ``classes``); a new
        model replaces a blend an earlier search handed on."""
        import pickle

        import joblib

        try:
            joblib.dump(model, self.path / MODEL_FILE)
        except (pickle.PicklingError, AttributeError, TypeError):  # it holds a closure (an anomaly scorer's score)
            import cloudpickle

            (self.path / MODEL_FILE).write_bytes(cloudpickle.dumps(model))  # joblib.load reads it all the same
        (self.path / ENSEMBLE_FILE).unlink(missing_ok=True)
        shutil.rmtree(self.path / MEMBERS_DIR, ignore_errors=True)
        described = {"features": [str(c) for c in getattr(model, "feature_names_in_", [])]}
        if hasattr(model, "classes_"):
            described["classes"] = [_plain(c) if hasattr(c, "item") else c for c in model.classes_]
        self.write_model_info({**described, **(info or {})})

    def write_model_info(self, info: dict[str, Any]) -> None:
        """Write ``model.json``: what scoring new rows needs to know about the model (docs/bundle-format.md)."""
        (self.path / MODEL_INFO_FILE).write_text(json.dumps(info, indent=2, default=str), encoding="utf-8")

    def load_model(self) -> Any:
        """The trained model: the blend of models when a search chose one (``dagsmith_kit.ensemble``), else
        ``model.joblib``."""
        import joblib

        if (self.path / ENSEMBLE_FILE).is_file():
            from dagsmith_kit import ensemble

            return ensemble.load(self.path / ENSEMBLE_FILE, self.path / MEMBERS_DIR)
        file = self.path / MODEL_FILE
        if not file.is_file():
            raise BundleError("the bundle holds no trained model (model.joblib); run a model step first")
        return joblib.load(file)

    def write_predictions(self, frame: pd.DataFrame) -> None:
        frame.reset_index(drop=True).to_parquet(self.path / PREDICTIONS_FILE, index=False)

    def predictions(self) -> pd.DataFrame:
        file = self.path / PREDICTIONS_FILE
        if not file.is_file():
            raise BundleError("the bundle holds no predictions (predictions.parquet); run a model step first")
        return pd.read_parquet(file)

    def metrics(self) -> dict[str, Any]:
        file = self.path / METRICS_FILE
        return json.loads(file.read_text(encoding="utf-8")) if file.is_file() else {}

    def write_metrics(self, values: dict[str, Any]) -> None:
        """Merge ``values`` into ``metrics.json`` (later steps add to earlier ones)."""
        merged = {**self.metrics(), **values}
        (self.path / METRICS_FILE).write_text(json.dumps(merged, indent=2, default=_plain), encoding="utf-8")

    def artifact_path(self, name: str) -> Path:
        folder = self.path / ARTIFACTS_DIR
        folder.mkdir(exist_ok=True)
        return folder / Path(name).name

    def append_report(self, markdown: str) -> None:
        with open(self.path / REPORT_FILE, "a", encoding="utf-8") as handle:
            handle.write(markdown.rstrip() + "\n\n")

    # ---------------------------------------------------------------- passing content on
    def drop_source(self) -> None:
        """Forget the raw source file once a table holds what it held: no later step reads it, so it is not copied
        into every step's bundle (its name stays, for reports)."""
        name = self.meta.pop("source", None)
        if name:
            (self.path / name).unlink(missing_ok=True)
            self.save_meta()

    def copy_into(self, destination: str | Path) -> Bundle:
        """Copy every file of this bundle into ``destination`` (copies, never links: inputs stay untouched), but for
        a raw source file a table was already loaded from."""
        loaded = self.meta.get("source") if self.table_names() else None
        shutil.copytree(self.path, destination, dirs_exist_ok=True,
                        ignore=lambda folder, names: [loaded] if loaded in names and Path(folder) == self.path else [])
        copy = Bundle.open(destination)
        if loaded:
            copy.drop_source()
        return copy
