"""AutoGluon as a peer: ``autogluon.tabular`` in a virtual environment of its own, called as a subprocess.

AutoGluon 1.6 requires pandas < 2.4, which dagsmith's own environment does not have, so the benchmark builds a
separate environment on first use (``DAGSMITH_AUTOGLUON_VENV``, else ``DAGSMITH_HOME/peers/autogluon``) from the
exact pins of ``autogluon-requirements.txt``, and hands each task over as Parquet files in a scratch folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from dagsmith.bench.peers import PeerUnavailable
from dagsmith_kit.frames import with_columns

VENV_VARIABLE = "DAGSMITH_AUTOGLUON_VENV"
REQUIREMENTS = Path(__file__).with_name("autogluon-requirements.txt")
FIT_SCRIPT = Path(__file__).with_name("autogluon_fit.py")
#: AutoGluon's default presets: with budgets of tens of seconds, bagged and stacked presets would not finish a fold.
PRESETS = "medium_quality"
#: pip's time to build the environment (about 3 minutes on 2 cores with a warm cache) and the slack a fit may take
#: beyond its time limit (starting Python, importing AutoGluon, predicting) before it is stopped.
BUILD_TIMEOUT_SECONDS, FIT_SLACK_SECONDS = 1800, 120


def venv_path(home: Path) -> Path:
    configured = os.environ.get(VENV_VARIABLE)
    return Path(configured).expanduser() if configured else home / "peers" / "autogluon"


def _problem(y_train: pd.Series, classification: bool) -> tuple[str, str]:
    """AutoGluon's problem type and the metric it tunes for: FLAML's defaults, so both peers chase the same thing."""
    if not classification:
        return "regression", "r2"
    return ("binary", "roc_auc") if y_train.nunique() == 2 else ("multiclass", "log_loss")


class AutoGluon:
    name = "autogluon"

    def __init__(self, venv: Path):
        self.venv = venv
        self.python = venv / "bin" / "python"

    @property
    def _stamp(self) -> Path:
        """The requirements the environment was built from, written once the build succeeded."""
        return self.venv / "dagsmith-requirements.txt"

    def prepare(self) -> None:
        """Build the environment unless it was built from the current pins; a half-built one is built again."""
        pins = REQUIREMENTS.read_text(encoding="utf-8")
        if self._stamp.is_file() and self._stamp.read_text(encoding="utf-8") == pins and self.python.is_file():
            return
        if self.venv.exists() and not (self.venv / "pyvenv.cfg").is_file():
            raise PeerUnavailable(f"AutoGluon's environment cannot be built: {self.venv} exists and is not a virtual "
                                  f"environment (set {VENV_VARIABLE} elsewhere)")
        shutil.rmtree(self.venv, ignore_errors=True)
        log = self.venv.with_name(self.venv.name + "-build.log")
        try:
            log.parent.mkdir(parents=True, exist_ok=True)
            with log.open("w", encoding="utf-8") as out:
                for command in ([sys.executable, "-m", "venv", str(self.venv)],
                                [str(self.python), "-m", "pip", "install", "--quiet", "-r", str(REQUIREMENTS)]):
                    subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=True,
                                   timeout=BUILD_TIMEOUT_SECONDS)
        except (OSError, subprocess.SubprocessError) as exc:
            raise PeerUnavailable(f"AutoGluon's environment could not be built at {self.venv} "
                                  f"({_last_error(log, exc)}); see {log}") from None
        self._stamp.write_text(pins, encoding="utf-8")

    def fit_predict(self, x_train: pd.DataFrame, y_train: pd.Series, x_test: pd.DataFrame, classification: bool,
                    budget_seconds: int) -> tuple[pd.Series, pd.DataFrame | None]:
        problem_type, metric = _problem(y_train, classification)
        with tempfile.TemporaryDirectory(prefix="dagsmith-autogluon-") as scratch:
            folder = Path(scratch)
            label = str(y_train.name)
            with_columns(x_train, {label: y_train}).to_parquet(folder / "train.parquet")
            x_test.to_parquet(folder / "test.parquet")
            (folder / "task.json").write_text(json.dumps({
                "label": label, "problem_type": problem_type, "metric": metric, "budget_seconds": budget_seconds,
                "presets": PRESETS}), encoding="utf-8")
            proc = subprocess.run([str(self.python), str(FIT_SCRIPT), str(folder)], capture_output=True, text=True,
                                  timeout=budget_seconds + FIT_SLACK_SECONDS)
            if proc.returncode != 0:
                lines = (proc.stderr or proc.stdout).strip().splitlines()
                raise RuntimeError(f"AutoGluon exited with {proc.returncode}: {lines[-1] if lines else 'no output'}")
            predicted = pd.read_parquet(folder / "predicted.parquet")["predicted"]
            proba = pd.read_parquet(folder / "proba.parquet") if classification else None
        return predicted, proba


def _last_error(log: Path, exc: Exception) -> str:
    """The line of the build's output that says what went wrong (pip's last ERROR line), else the failure itself."""
    lines = [line.strip() for line in log.read_text(encoding="utf-8", errors="replace").splitlines()
             if line.strip()] if log.is_file() else []
    errors = [line for line in lines if line.startswith(("ERROR", "Error"))]
    if isinstance(exc, subprocess.TimeoutExpired):
        return f"gave up after {BUILD_TIMEOUT_SECONDS} s"
    return (errors or lines or [str(exc)])[-1]
