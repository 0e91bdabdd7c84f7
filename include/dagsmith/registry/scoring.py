"""Scoring rows with a model version as a sandboxed step, in the runtime a pipeline step uses.

The step's read-only input holds the version folder (``model/``, hard-linked where the file system allows, else
copied) beside the rows to score (``rows.parquet``); its code is a few lines that hand both to
``dagsmith_kit.scoring``, which checks the rows against the version's schema, replays the fitted preprocessing and
writes ``predictions.parquet`` and ``scoring.json`` into the step's output.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from dagsmith.config import Settings
from dagsmith.errors import InputError, UserFacingError
from dagsmith.healing.classify import telling_line
from dagsmith.runtime.base import Invocation, Runtime
from dagsmith.scratch import scratch_folder

SERVICE = "dagsmith_scoring"
ROWS_FILE = "rows.parquet"
MODEL_DIR = "model"
#: The scoring step's code: the contract's arguments turned into ``dagsmith_kit.scoring``'s.
SCORER = '''"""Score the rows in the input with the model version beside them (dagsmith_kit.scoring)."""
import json
import sys

from dagsmith_kit.scoring import main

args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
with open(args["--params"], encoding="utf-8") as handle:
    params = json.load(handle)
main(["--model", f"{args['--input']}/model", "--input", f"{args['--input']}/rows.parquet",
      "--output", args["--output"], "--chunk-rows", str(params.get("chunk_rows", 50000)),
      "--after-step", str(params.get("after_step", 0)), *(["--ahead"] if params.get("ahead") else [])])
'''


class ScoringRefused(InputError):
    """The rows cannot be scored by this version (a feature column missing, a type changed): one line, why."""


class ScoringFailed(UserFacingError):
    """The scoring step failed for another reason (a limit, a crash); the message holds its telling line."""


@dataclass(frozen=True)
class Scored:
    predictions: pd.DataFrame
    #: ``scoring.json``: rows scored, extra columns, unseen categories, out-of-range values, drift per feature.
    report: dict[str, Any]


def _link_tree(source: Path, destination: Path) -> None:
    """``source`` under ``destination`` by hard links (no copy of a large model), copies across file systems."""
    try:
        shutil.copytree(source, destination, copy_function=os.link)
    except OSError:
        shutil.rmtree(destination, ignore_errors=True)
        shutil.copytree(source, destination)


def score(version_dir: Path, rows: pd.DataFrame, *, runtime: Runtime, settings: Settings,
          chunk_rows: int | None = None, after_step: int = 0) -> Scored:
    """``rows`` scored by the version in ``version_dir`` in a sandboxed step; ``after_step`` > 0 when they are a
    run's rows as its step ``after_step`` wrote them (see ``dagsmith_kit.scoring.score``). Raises
    ``ScoringRefused`` when the version cannot take these rows, ``ScoringFailed`` when the step failed otherwise."""
    return _scored(version_dir, rows, {"after_step": after_step, **({"chunk_rows": chunk_rows} if chunk_rows else {})},
                   runtime, settings)


def score_ahead(version_dir: Path, *, runtime: Runtime, settings: Settings) -> Scored:
    """The forecast past the data of a forecast's version: the rows its feature step says come next
    (``dagsmith_kit.scoring.score_ahead``), each prediction beside its series keys and time. Raises as ``score``."""
    return _scored(version_dir, None, {"ahead": True}, runtime, settings)


def _scored(version_dir: Path, rows: pd.DataFrame | None, params: dict[str, Any], runtime: Runtime,
            settings: Settings) -> Scored:
    with scratch_folder("dagsmith-scoring-") as scratch:
        staged = scratch / "input"
        _link_tree(version_dir, staged / MODEL_DIR)
        if rows is not None:
            rows.to_parquet(staged / ROWS_FILE, index=False)
        output = scratch / "output"
        result = runtime.run(Invocation(SERVICE, {"main.py": SCORER}, staged, output, params, settings.step_limits))
        if not result.ok:
            line = telling_line(result.stderr or result.stdout or "")
            if result.exit_code == 2 and line.startswith("error: "):
                raise ScoringRefused(line.removeprefix("error: "))
            raise ScoringFailed(f"scoring with {version_dir.name} failed ({result.isolation or runtime.name}): "
                                f"{line or f'exit code {result.exit_code}'}")
        return Scored(pd.read_parquet(output / "predictions.parquet"),
                      json.loads((output / "scoring.json").read_text(encoding="utf-8")))


def drifted(report: dict[str, Any], threshold: float) -> dict[str, float]:
    """The features whose drift (PSI) reaches ``threshold``, with it, most drifted first."""
    columns = (report.get("drift") or {}).get("columns") or {}
    found = {name: float(c["psi"]) for name, c in columns.items() if c.get("psi") is not None and c["psi"] >= threshold}
    return dict(sorted(found.items(), key=lambda item: -item[1]))
