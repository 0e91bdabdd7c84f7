"""The record of what a pipeline's steps did to the tables, so the fitted preprocessing can be replayed on new rows.

A step that transforms tables through the kit (``transform_tables``, ``features.fit_replace``) records its ``apply``
callable with its fitted state as ``transforms/NN-<service>.pkl`` (cloudpickle, which also pickles closures defined
in a service's ``__main__``) and an entry in ``transforms/steps.json``. ``run_service`` audits the steps that record
nothing: one that only removed rows is ``training_only`` (new rows are never dropped), one that changed the tables
some other way is ``unreplayable``. Loading the pickles (``load``) runs what services wrote: only the scorer does,
inside the sandbox; ``steps`` reads the JSON index and is safe anywhere.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from filecmp import cmp
from pathlib import Path
from typing import Any

import pandas as pd

from dagsmith_kit.bundle import TABLE_NAMES, Bundle
from dagsmith_kit.files import write_whole

TRANSFORMS_DIR = "transforms"
STEPS_FILE = "steps.json"
#: What a step's entry means at scoring time (docs/bundle-format.md, "Replaying preprocessing on new rows").
REPLAY, TRAINING_ONLY, UNREPLAYABLE = "replay", "training_only", "unreplayable"


def service_name() -> str:
    """The running service's name: what dagsmith calls it, else its folder's name."""
    return os.environ.get("DAGSMITH_SERVICE") or Path(sys.argv[0]).resolve().parent.name


def steps(folder: str | Path) -> list[dict[str, Any]]:
    """The recorded entries of a bundle or version folder, in the order the steps ran (plain JSON: safe to read)."""
    file = Path(folder) / TRANSFORMS_DIR / STEPS_FILE
    return json.loads(file.read_text(encoding="utf-8")) if file.is_file() else []


def _append(out: Bundle, kind: str, **details: Any) -> dict[str, Any]:
    entries = steps(out.path)
    entry = {"step": len(out.meta.get("lineage") or []) + 1, "service": service_name(), "kind": kind, **details}
    entries.append(entry)
    folder = out.path / TRANSFORMS_DIR
    folder.mkdir(exist_ok=True)
    write_whole(folder / STEPS_FILE, json.dumps(entries, indent=2))
    return entry


def record(out: Bundle, apply: Callable[[pd.DataFrame, Any], pd.DataFrame], state: Any,
           ahead: Callable[[Any], pd.DataFrame] | None = None) -> dict[str, Any]:
    """Record ``apply(frame, state)`` as the next transform of ``out``; a state that cannot be pickled makes the
    step ``unreplayable`` (the step itself still succeeds: only scoring new rows is lost). A forecast's step may
    record ``ahead(state)`` too: the raw rows of the times it can forecast past the data it learnt from (the series
    keys, the time, then any column those decide, in that order), which a run scores to show the forecast itself
    (``ahead_rows``)."""
    import cloudpickle

    name = f"{len(steps(out.path)) + 1:02d}-{service_name()}.pkl"
    file = out.path / TRANSFORMS_DIR / name
    file.parent.mkdir(exist_ok=True)
    try:
        payload = cloudpickle.dumps({"service": service_name(), "apply": apply, "state": state, "ahead": ahead})
    except Exception as exc:  # noqa: BLE001 - any pickling failure means the same thing: no replay
        return mark_unreplayable(out, f"its fitted state could not be saved ({type(exc).__name__}: {exc})")
    file.write_bytes(payload)
    return _append(out, REPLAY, file=name, **({"ahead": True} if ahead else {}))


def mark_unreplayable(out: Bundle, reason: str) -> dict[str, Any]:
    """Record that this step's change to the tables cannot be applied to new rows, and why."""
    return _append(out, UNREPLAYABLE, reason=reason)


def audit(inp: Bundle, out: Bundle) -> dict[str, Any] | None:
    """After a step that recorded nothing: record it ``training_only`` when every row it wrote is a row it was
    given (it only dropped rows), ``unreplayable`` when it changed them; nothing when it wrote no table or loaded
    the first one."""
    given = inp.table_names()
    written = [name for name in TABLE_NAMES if (out.path / f"{name}.parquet").is_file()
               and not (name in given and cmp(inp.path / f"{name}.parquet", out.path / f"{name}.parquet",
                                              shallow=False))]
    if not written or not given:
        return None
    if _only_dropped_rows(inp, given, out, written):
        return _append(out, TRAINING_ONLY)
    return mark_unreplayable(out, "it changed the tables without recording how (not through "
                                  "dagsmith_kit.transform_tables), so new rows cannot be prepared the same way")


def _only_dropped_rows(inp: Bundle, given: list[str], out: Bundle, written: list[str]) -> bool:
    """Whether every written table has the given tables' columns and only rows found in them, unchanged. Tables are
    read one at a time and only their row hashes kept, so the check needs little more memory than the step did."""
    columns: list[str] | None = None

    def hashes(bundle: Bundle, name: str) -> pd.Series | None:
        nonlocal columns
        frame = bundle.table(name)
        columns = list(frame.columns) if columns is None else columns
        return pd.util.hash_pandas_object(frame, index=False) if list(frame.columns) == columns else None

    known = [hashes(inp, name) for name in given]
    if any(h is None for h in known):
        return False
    seen = pd.concat(known)
    for name in written:
        rows = hashes(out, name)
        if rows is None or not rows.isin(seen).all():
            return False
    return True


def load(folder: str | Path, after_step: int = 0) -> list[tuple[str, Callable[[pd.DataFrame, Any], pd.DataFrame], Any]]:
    """The ``replay`` transforms of a bundle or version folder as ``(service, apply, state)``, in order, of the
    steps after step ``after_step`` (rows some step's output holds already went through the steps up to it). An
    ``unreplayable`` entry raises ``ValueError`` saying why.

    This unpickles code services wrote: call it only inside the sandbox (the scorer does)."""
    loaded = []
    for entry in (e for e in steps(folder) if e["step"] > after_step):
        if entry["kind"] == UNREPLAYABLE:
            raise ValueError(f"step {entry['step']} ({entry['service']}) cannot be applied to new rows: "
                             f"{entry.get('reason') or 'no reason recorded'}")
        if entry["kind"] == REPLAY:
            payload = _payload(folder, entry)
            loaded.append((entry["service"], payload["apply"], payload["state"]))
    return loaded


def ahead_rows(folder: str | Path) -> pd.DataFrame | None:
    """The rows past the known data that the latest step recording ``ahead`` makes, or None when no step does.

    This unpickles code services wrote: call it only inside the sandbox (the scorer does)."""
    entry = next((e for e in reversed(steps(folder)) if e["kind"] == REPLAY and e.get("ahead")), None)
    if entry is None:
        return None
    payload = _payload(folder, entry)
    return payload["ahead"](payload["state"])


def _payload(folder: str | Path, entry: dict[str, Any]) -> dict[str, Any]:
    """A ``replay`` entry's pickle, read from the folder by its own name only (never a path the entry holds)."""
    import pickle

    return pickle.loads((Path(folder) / TRANSFORMS_DIR / Path(entry["file"]).name).read_bytes())


def replay(frame: pd.DataFrame, loaded: list[tuple[str, Callable, Any]]) -> pd.DataFrame:
    """``frame`` after every loaded transform, in order."""
    for _, apply, state in loaded:
        frame = apply(frame, state)
    return frame
