"""Fit AutoGluon on a task's training rows and predict its held-out rows, in AutoGluon's own environment.

Run by :mod:`dagsmith.bench.autogluon_peer` as ``python autogluon_fit.py FOLDER`` with that environment's Python,
so it imports nothing of dagsmith. FOLDER holds ``train.parquet`` (features and the label), ``test.parquet``
(features) and ``task.json``; the predictions are written back there (``predicted.parquet``, and for classification
``proba.parquet`` with a column per class label).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
from autogluon.tabular import TabularPredictor

#: Tabular's neural networks need torch, which this environment leaves out (a CUDA build would be pulled in).
EXCLUDED_MODELS = ["NN_TORCH", "FASTAI"]


def main(folder: Path) -> None:
    task = json.loads((folder / "task.json").read_text(encoding="utf-8"))
    train, test = pd.read_parquet(folder / "train.parquet"), pd.read_parquet(folder / "test.parquet")
    predictor = TabularPredictor(label=task["label"], problem_type=task["problem_type"], eval_metric=task["metric"],
                                 path=str(folder / "models"), verbosity=0)
    predictor.fit(train, time_limit=task["budget_seconds"], presets=task["presets"], num_cpus=1, num_gpus=0,
                  excluded_model_types=EXCLUDED_MODELS)
    pd.DataFrame({"predicted": predictor.predict(test)}).to_parquet(folder / "predicted.parquet")
    if task["problem_type"] != "regression":
        predictor.predict_proba(test).rename(columns=str).to_parquet(folder / "proba.parquet")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
