"""A forecast's answer holds the forecast itself: the values of the times past the data, not only how well the model
forecast the held-out rows.

Once a forecast's model is a version, the rows its feature step says come next (each series' next ``horizon``
times) are scored by the same sandboxed step ``dagsmith predict`` uses; they are written beside the run as
``forecast.csv`` (the series keys, the time and the ``prediction``) and the answer names the first and the last.
A forecast that cannot be made (a model that needs values no one knows ahead, a feature step that says no rows) is
said in the answer with the way to score such rows; it never fails the run.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pandas as pd

from dagsmith.config import Settings
from dagsmith.errors import UserFacingError
from dagsmith.models.execution import FORECAST_FILE
from dagsmith_kit.freeze import SCHEMA_FILE
from dagsmith_kit.insight import readable_number

logger = logging.getLogger(__name__)
#: Values of the forecast named in the answer (the rest are in the file).
NAMED = 3


def forecast_ahead(version: dict[str, Any], target: str, workspace: Path, trace: dict[str, Any],
                   settings: Settings) -> str:
    """Score the rows past the data with the registered ``version``, write them as ``forecast.csv`` in
    ``workspace``, and say them in a sentence (or why there is no forecast past the data)."""
    from dagsmith.registry.champion import runtime_of
    from dagsmith.registry.scoring import score_ahead

    try:
        scored = score_ahead(Path(version["path"]), runtime=runtime_of(trace, settings), settings=settings)
        time = json.loads((Path(version["path"]) / SCHEMA_FILE).read_text(encoding="utf-8"))["time_column"]
        sentence = said(scored.predictions, target, time)
    except UserFacingError as exc:
        return (f"No forecast past the data: {exc}. Rows with the values it needs can be scored with `dagsmith "
                f"predict {version['pipeline_id']} ROWS.csv`.")
    except (OSError, ValueError, KeyError, IndexError) as exc:  # the run and its version stand without it
        logger.warning("no forecast past the data for pipeline %s: %s", version["pipeline_id"], exc)
        return f"No forecast past the data: {exc}."
    try:
        scored.predictions.to_csv(workspace / FORECAST_FILE, index=False)
    except OSError as exc:  # a full disk loses the file, not the answer
        logger.warning("could not write the forecast of pipeline %s: %s", version["pipeline_id"], exc)
    return sentence


def said(forecast: pd.DataFrame, target: str, time: str) -> str:
    """The forecast in a sentence: the first values of its first series and its last, with their times. The rows
    hold the series keys, then ``time``, then what those decide (``dagsmith_kit.transforms.record``'s ``ahead``)."""
    keys = list(forecast.columns[: list(forecast.columns).index(time)])
    first = forecast[(forecast[keys] == forecast[keys].iloc[0]).all(axis=1)] if keys else forecast
    shown = [f"{readable_number(float(v))} at {t}" for t, v in zip(first[time].iloc[:NAMED], first["prediction"])]
    if len(first) > NAMED:
        shown.append(f"... {readable_number(float(first['prediction'].iloc[-1]))} at {first[time].iloc[-1]}")
    series = (f" of each of {forecast.groupby(keys).ngroups:,} series; "
              + ", ".join(f"{k} {first[k].iloc[0]}" for k in keys) + ":") if keys else ":"
    return (f"The forecast of {target} past the data ({FORECAST_FILE}, the next {len(first):,} times{series} "
            + ", ".join(shown) + ").")
