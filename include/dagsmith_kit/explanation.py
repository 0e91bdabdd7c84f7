"""What drives a model's predictions, in the form people and the product read.

An explanation service measures how much each feature matters (by whatever method it implements) and hands
the ranked features to ``write_explanation``, which adds each one's direction (how the prediction moves with the
feature on the held-out rows), writes ``explanation.json`` for the product's answer and a report section in words.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dagsmith_kit.bundle import Bundle
from dagsmith_kit.frames import with_columns
from dagsmith_kit.insight import readable_number
from dagsmith_kit.service import ServiceError

EXPLANATION_FILE = "explanation.json"
#: drivers named in the report and in explanation.json.
TOP_DRIVERS = 10
#: a feature moving the prediction by less than this (probability, or share of the predictions' spread) has no
#: direction worth stating.
MIN_EFFECT = 0.01
#: categories held by fewer rows than this share are not tried, and at most this many of the most frequent are.
MIN_CATEGORY_SHARE = 0.01
MAX_CATEGORIES = 20


@dataclass(frozen=True)
class Driver:
    """One feature's importance (the score lost when it is scrambled), its spread over repeats, and its direction."""

    feature: str
    importance: float
    spread: float
    direction: str | None = None


def held_out_model(inp: Bundle, target: str) -> tuple[Any, pd.DataFrame, list[str]]:
    """The trained model, the test rows whose target is known, and the features the model was trained on (its
    ``feature_names_in_``, else the bundle's feature columns), checked to be in the test table."""
    model = inp.load_model()
    test = inp.table("test")
    test = test[test[target].notna()]
    features = [str(c) for c in getattr(model, "feature_names_in_", inp.feature_columns(test))]
    absent = [c for c in features if c not in test.columns]
    if absent:
        raise ServiceError(f"the test table lacks columns the model was trained on: {', '.join(absent[:10])}")
    return model, test, features


def _scorer(model: Any) -> tuple[Any, str | None]:
    """What a direction is read against: a function giving each row's predicted value for a regressor, or its
    probability of the second class for a binary classifier (scikit-learn's positive class), and that class; None
    for other models."""
    classes = getattr(model, "classes_", None)
    if classes is None:
        return model.predict, None
    if len(classes) == 2 and hasattr(model, "predict_proba"):
        return (lambda frame: model.predict_proba(frame)[:, 1]), str(classes[1])
    return None, None


def _mean_scores(score: Any, rows: pd.DataFrame, feature: str, values: list) -> dict[Any, float]:
    """The mean score of ``rows`` with ``feature`` set to each of ``values`` in every row: the settings are stacked
    and scored in one call, as a pipeline's fixed cost per call outweighs its cost per row on a few thousand rows."""
    stack = pd.concat([with_columns(rows, {feature: value}) for value in values], ignore_index=True)
    means = np.asarray(score(stack), dtype=float).reshape(len(values), len(rows)).mean(axis=1)
    return dict(zip(values, (float(m) for m in means), strict=True))


def direction(model: Any, rows: pd.DataFrame, feature: str, target: str) -> str | None:
    """How the prediction moves with one feature, all else held as it is in ``rows`` (partial dependence): from the
    feature's lower to its upper quartile, or from its least to its most favourable frequent category. None when
    the model gives no single score or the feature moves it by less than ``MIN_EFFECT`` of the scale."""
    score, positive = _scorer(model)
    if score is None:
        return None
    values = rows[feature].dropna()
    if pd.api.types.is_numeric_dtype(values) and values.nunique() > 2:
        low, high = values.quantile([0.25, 0.75])
        if low == high:
            low, high = values.quantile([0.05, 0.95])
        if low == high:
            return None
        settings = _mean_scores(score, rows, feature, [low, high])
    else:
        frequent = values.value_counts(normalize=True)
        frequent = frequent[frequent >= MIN_CATEGORY_SHARE].index[:MAX_CATEGORIES]
        if len(frequent) < 2:
            return None
        settings = _mean_scores(score, rows, feature, list(frequent))
    lowest, highest = min(settings, key=settings.get), max(settings, key=settings.get)
    scale = 1.0 if positive is not None else float(np.std(model.predict(rows))) or 1.0
    if (settings[highest] - settings[lowest]) / scale < MIN_EFFECT:
        return None
    shown = (lambda v: f"{v:.0%}") if positive is not None else readable_number
    outcome = f"{target} = {positive}" if positive is not None else target
    if pd.api.types.is_numeric_dtype(values) and values.nunique() > 2:
        up = settings[high] > settings[low]
        verb = f"makes {outcome} {'more' if up else 'less'} likely" if positive is not None else \
            f"{'raises' if up else 'lowers'} {target}"
        return (f"raising {feature} from {readable_number(low)} to {readable_number(high)} {verb} "
                f"({shown(settings[low])} to {shown(settings[high])} on average)")
    peak = "most likely" if positive is not None else "highest"
    return (f"{outcome} {peak} when {feature} is '{highest}' ({shown(settings[highest])} on average, against "
            f"{shown(settings[lowest])} when it is '{lowest}')")


def write_explanation(out: Bundle, model: Any, rows: pd.DataFrame, target: str, drivers: list[Driver], *,
                      method: str, scoring: str, score: float) -> list[Driver]:
    """Give the ``TOP_DRIVERS`` most important of ``drivers`` their direction on ``rows`` (held-out features), and
    write ``explanation.json``, ``explanation.*`` metrics and a report section; returns the drivers written. A
    feature whose scrambling costs nothing (or helps) drives nothing and is left out."""
    ranked = sorted((d for d in drivers if d.importance > 0), key=lambda d: -d.importance)[:TOP_DRIVERS]
    ranked = [Driver(d.feature, d.importance, d.spread, direction(model, rows, d.feature, target)) for d in ranked]
    document = {"method": method, "scoring": scoring, "score": score, "rows": len(rows), "target": target,
                "drivers": [asdict(d) for d in ranked]}
    (out.path / EXPLANATION_FILE).write_text(json.dumps(document, indent=2), encoding="utf-8")
    out.write_metrics({f"explanation.{d.feature}": d.importance for d in ranked})
    lines = [f"{i}. **{d.feature}**: {scoring} drops by {d.importance:.3g} (± {d.spread:.2g}) when it is scrambled"
             + (f"; {d.direction}" if d.direction else "") for i, d in enumerate(ranked, 1)]
    out.append_report(f"## What drives the predictions\n\n{method} on {len(rows):,} held-out rows ({scoring} "
                      f"{score:.3g} with every feature intact):\n\n"
                      + ("\n".join(lines) or "No feature lowers the score when it is scrambled: the model leans on "
                                             "none of them alone."))
    return ranked


def read_explanation(bundle_path: str | Path) -> dict | None:
    """``explanation.json`` of a bundle folder, or None when the bundle holds none."""
    file = Path(bundle_path) / EXPLANATION_FILE
    return json.loads(file.read_text(encoding="utf-8")) if file.is_file() else None
