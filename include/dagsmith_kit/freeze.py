"""Turn a completed run's final bundle into a model version folder: what scoring new rows needs, nothing else.

This runs in dagsmith's own process, so it only moves files and reads JSON: it never unpickles what services
wrote (the scorer does, inside the sandbox). The layout is documented in docs/bundle-format.md ("Model versions").
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from dagsmith_kit import drift, transforms
from dagsmith_kit.bundle import ENSEMBLE_FILE, MEMBERS_DIR, META_FILE, MODEL_FILE, MODEL_INFO_FILE, BundleError

FORMAT_VERSION = 1
SCHEMA_FILE = "schema.json"
REFERENCE_FILE = "reference.json"
#: a non-numeric column with more distinct values than this (and mostly distinct) is free text, not categories.
MAX_CATEGORIES = 1000
#: file names a bundle may hand a version: ``NN-<service>.pkl`` transforms and plain member model files.
_SAFE_NAME = re.compile(r"^[\w][\w.-]*$")


def column_kind(values: pd.Series) -> str:
    """``numeric``, ``boolean``, ``datetime``, ``categorical`` or ``text`` (many, mostly distinct strings)."""
    if pd.api.types.is_bool_dtype(values):
        return "boolean"
    if pd.api.types.is_numeric_dtype(values):
        return "numeric"
    if pd.api.types.is_datetime64_any_dtype(values):
        return "datetime"
    distinct = values.dropna().nunique()
    if distinct > MAX_CATEGORIES or (distinct > 50 and distinct > 0.5 * values.notna().sum()):
        return "text"
    return "categorical"


def describe_column(name: str, values: pd.Series) -> dict[str, Any]:
    """A feature's entry in ``schema.json``: kind, dtype, missing rate, and categories seen or numeric range."""
    kind = column_kind(values)
    entry: dict[str, Any] = {"name": name, "kind": kind, "dtype": str(values.dtype),
                             "missing": float(values.isna().mean()) if len(values) else 0.0}
    if kind == "numeric":
        present = values.dropna()
        entry["min"] = float(present.min()) if len(present) else None
        entry["max"] = float(present.max()) if len(present) else None
    elif kind in ("categorical", "boolean"):
        entry["categories"] = sorted({str(v) for v in values.dropna().unique()})
    return entry


def _regular_file(path: Path) -> Path:
    """``path``, refused when it is not a plain file (a service could leave a link to a host file)."""
    if path.is_symlink() or not path.is_file():
        raise BundleError(f"{path.name} in the bundle is missing or not a regular file")
    return path


def _safe_name(name: Any) -> str:
    if not isinstance(name, str) or not _SAFE_NAME.match(name):
        raise BundleError(f"the bundle names a file {name!r} a version cannot hold")
    return name


def _read_json(path: Path) -> Any:
    try:
        return json.loads(_regular_file(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise BundleError(f"{path.name} is not valid JSON: {exc}") from exc


def _copy_model(bundle: Path, version: Path) -> dict[str, Any]:
    """Copy the model files; returns ``schema.json``'s ``model`` entry."""
    info = _read_json(bundle / MODEL_INFO_FILE) if (bundle / MODEL_INFO_FILE).exists() else {}
    if not isinstance(info, dict):
        raise BundleError(f"{MODEL_INFO_FILE} must hold a JSON object")
    if info.get("can_score") is False:
        pass  # kept as a version all the same: schema.json says why it cannot score, and so does the scorer
    elif (bundle / ENSEMBLE_FILE).exists():
        manifest = _read_json(bundle / ENSEMBLE_FILE)
        (version / MEMBERS_DIR).mkdir()
        for member in manifest.get("members", []):
            name = _safe_name(Path(str(member.get("model", ""))).name)
            shutil.copyfile(_regular_file(bundle / MEMBERS_DIR / name), version / MEMBERS_DIR / name)
        shutil.copyfile(bundle / ENSEMBLE_FILE, version / ENSEMBLE_FILE)
        info = {**info, "kind": manifest.get("kind"), "file": ENSEMBLE_FILE,
                "features": list(dict.fromkeys(str(c) for m in manifest.get("members", []) for c in m["features"]))}
    elif (bundle / MODEL_FILE).exists():
        shutil.copyfile(_regular_file(bundle / MODEL_FILE), version / MODEL_FILE)
        info = {**info, "file": MODEL_FILE}
    else:
        raise BundleError("the run's final bundle holds no trained model (model.joblib or ensemble.json)")
    (version / MODEL_INFO_FILE).write_text(json.dumps(info, indent=2), encoding="utf-8")
    return {k: info[k] for k in ("kind", "classes", "file", "anomaly_threshold", "can_score", "reason") if k in info}


def _copy_transforms(bundle: Path, version: Path) -> str | None:
    """Copy the recorded transforms; returns why they cannot be replayed on new rows, if they cannot."""
    entries = transforms.steps(bundle)
    folder = version / transforms.TRANSFORMS_DIR
    folder.mkdir()
    blocked = None
    for entry in entries:
        if entry.get("kind") == transforms.UNREPLAYABLE and blocked is None:
            blocked = (f"step {entry.get('step')} ({entry.get('service')}) cannot be applied to new rows: "
                       f"{entry.get('reason') or 'no reason recorded'}")
        if entry.get("kind") == transforms.REPLAY:
            name = _safe_name(entry.get("file"))
            shutil.copyfile(_regular_file(bundle / transforms.TRANSFORMS_DIR / name), folder / name)
    (folder / transforms.STEPS_FILE).write_text(json.dumps(entries, indent=2), encoding="utf-8")
    return blocked


def freeze(bundle_dir: str | Path, training_frame: pd.DataFrame, version_dir: str | Path, *,
           id_columns: list[str], target: str | None, task_type: str) -> Path:
    """Build ``version_dir`` from a completed run's final bundle and the raw training frame it started from.

    A model that cannot score new rows (its method labels only the rows it was fitted on, or a step before it
    cannot be replayed) still makes a version: ``schema.json``'s ``model`` says ``can_score: false`` and why, and
    the scorer refuses with that reason. Raises ``BundleError`` (and leaves nothing behind) when the bundle holds
    no model, or names a file that is not a plain file in it.
    """
    bundle, version = Path(bundle_dir), Path(version_dir)
    if version.exists():
        raise BundleError(f"{version} already exists; a version folder is never overwritten")
    meta = _read_json(bundle / META_FILE)
    excluded = set(meta.get("excluded_columns") or [])
    missing = [c for c in [*id_columns, *([target] if target else [])] if c not in training_frame.columns]
    if missing:
        raise BundleError(f"the training frame has no column {', '.join(missing)}")
    features = [str(c) for c in training_frame.columns
                if c != target and c not in id_columns and c not in excluded]
    version.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{version.name}.", dir=version.parent))
    try:
        blocked = _copy_transforms(bundle, staging)
        model = _copy_model(bundle, staging)
        if blocked and model.get("can_score") is not False:
            model.update(can_score=False, reason=blocked)
        schema = {"format_version": FORMAT_VERSION, "task_type": task_type, "target": target,
                  "id_columns": list(id_columns), "time_column": meta.get("time_column"),
                  "features": [describe_column(c, training_frame[c]) for c in features], "model": model}
        (staging / SCHEMA_FILE).write_text(json.dumps(schema, indent=2), encoding="utf-8")
        (staging / REFERENCE_FILE).write_text(json.dumps(drift.reference(training_frame, features)),
                                              encoding="utf-8")
        os.chmod(staging, 0o755)
        os.rename(staging, version)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return version
