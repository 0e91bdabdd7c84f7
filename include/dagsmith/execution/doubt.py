"""An answer too good to be true is doubted, not reported as a plain success.

A held-out score at or near perfect, or one feature carrying nearly all of the explanation, usually means a column
recorded with or after the outcome (a leak: ``tenure_band`` derived from ``tenure`` predicting ``has_contract``, itself
derived from it) or a target that is not the one meant. The run completes, marked as needing review, naming the
column that decides the target when one does: each column alone is scored on the training rows by a small tree fitted
on half of them (half of their groups, when the split kept groups apart) and scored on the other half, and one that
scores near perfect on rows it did not learn from decides the target. The held-out rows are never read for it. A
forecast's time is no such column: on shuffled rows it only interpolates between neighbours in time, which would decide
any smooth series, and a forecast is meant to learn from it; nor is its target's own past as known a horizon back. A
score near perfect that a trivial predictor matches (yesterday's value of a smooth series) is an easy task, not a doubt.

Two columns can give the answer away where neither does alone, whatever the held-out score: a rate that is one column
over another (``prate`` = 100 × totpart / totelg, R² 0.93 held out), a win that is one score above the other. Pairs of
the model's features are screened for a difference, ratio, product or sum that gives a numeric target (``_computed``)
or decides a yes/no one (``_compared``), and such a pair is named with how it is combined.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd
from scipy.stats import rankdata
from sklearn import metrics as skm
from sklearn.model_selection import cross_val_predict
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from dagsmith.execution.quality import Quality
from dagsmith_kit import Bundle
from dagsmith_kit.folds import Folds, cross_folds, groups_of
from dagsmith_kit.metrics import label

#: A held-out ROC AUC or R² (macro F1 for a classifier without probabilities) at least this is too good to trust.
TOO_GOOD = 0.995
#: One feature carrying at least this share of the explanation's importance carries it nearly alone.
DOMINANT_SHARE = 0.9
#: A column alone scoring at least this (balanced accuracy, or R²) on rows it did not learn from decides the target.
DECIDES = 0.98
#: Training rows and columns the per-column check reads at most (the explanation's drivers first): seconds, not
#: minutes, on a large or wide table.
MAX_ROWS, MAX_COLUMNS = 20_000, 200
#: How deep the one-column tree may grow: enough for a band of values or a handful of categories, not to memorise.
DEPTH = 6
#: The score a doubt speaks of: the first of these the run's quality reports.
HEADLINE = ("roc_auc", "r2", "f1")
#: A numeric target that a product, ratio, sum or difference of two feature columns gives on the training rows with at
#: least this R² (scaled and shifted: a percentage, a unit) is computed from them, whatever the held-out score.
COMPUTED = 0.9999
#: Rows the arithmetic is screened on, and the share of them where both columns must hold a number.
SCREEN_ROWS, MIN_PRESENT = 1_000, 0.9
#: The feature columns (the explanation's drivers first) whose pairs are tried: 4 x 40 x 40 combinations at most.
MAX_PAIRED = 40
#: How each combination of two columns is written, and computed; of two that fit as well, the first (a difference is
#: how two columns are compared).
ARITHMETIC = {"−": np.subtract, "/": np.divide, "×": np.multiply, "+": np.add}


def review(quality: Quality, model: Bundle, table: pd.DataFrame, drivers: list[dict], *,
           classification: bool) -> str | None:
    """Why a valid result needs a person's review before it is trusted, or None when nothing is too good.

    ``model`` is the model step's output (its training rows, as prepared), ``table`` the training rows as the split
    left them (the columns the model's features were made from, with their values as loaded), ``drivers`` the
    explanation's ranked features.
    """
    target = model.require_target()
    train = model.table("train")
    candidates = _candidates(model, train, list(table.columns), [d["feature"] for d in drivers])
    paired = list(candidates)[:MAX_PAIRED]
    compared = _compared(model, table, target, paired) if classification else None
    if compared:
        (a, b), said, alone = compared
        return (f"`{target}` is decided by `{said}` (balanced accuracy {alone:.3f} from that alone on training rows it "
                f"did not learn from, though neither column alone decides it): likely columns recorded with or after "
                f"the outcome, or the wrong target. Leave them out (--exclude {a} --exclude {b}) or check the target.")
    computed = None if classification else _computed(table, target, paired)
    if computed:
        (a, b), formula, fit = computed
        return (f"`{target}` is computed from `{a}` and `{b}` ({target} = {formula} on the training rows, R² "
                f"{fit:.4f}): a model given both only redoes the arithmetic, and says nothing of what moves `{target}`."
                f" Leave them out (--exclude {a} --exclude {b}) or check the target.")
    key = next((key for key in HEADLINE if key in quality.metrics), None)
    name, score = (label(key), quality.metrics[key]) if key else (None, None)
    # a trivial predictor as good (a forecast of a smooth series from its value a horizon back) says the task is easy
    too_good = score is not None and score >= TOO_GOOD and quality.metrics.get(f"baseline_{key}", 0.0) < TOO_GOOD
    dominant = _dominant(drivers)
    if not too_good and dominant is None:
        return None
    column, alone = _deciding(model, train, candidates, classification=classification)
    decides = column is not None and alone >= DECIDES
    if decides:
        seen = ([f"held-out {name} {score:.3f}"] if score is not None else []) + (
            [f"`{dominant}` carries nearly all of the explanation"] if dominant else [])
        measure = "balanced accuracy" if classification else "R²"
        return (f"`{column}` alone decides `{target}` ({measure} {alone:.3f} from that column alone on training rows "
                f"it did not learn from; {', '.join(seen)}): likely a leak (a column recorded with or after the "
                f"outcome) or the wrong target. Leave it out (--exclude {column}) or check the target.")
    if too_good:
        return (f"a held-out {name} of {score:.3f} is too good to take on trust, though no single column decides "
                f"`{target}` (an easy task can score this well too): check that no column is recorded with or after "
                f"the outcome, and that `{target}` is the column meant.")
    return None


def _dominant(drivers: list[dict]) -> str | None:
    """The feature that carries at least ``DOMINANT_SHARE`` of the explanation's importance, if one does."""
    total = sum(d["importance"] for d in drivers if d["importance"] > 0)
    top = max(drivers, key=lambda d: d["importance"], default=None)
    return top["feature"] if top and total > 0 and top["importance"] / total >= DOMINANT_SHARE else None


def origins(features: list[str], columns: list[str]) -> dict[str, list[str]]:
    """The model's features grouped by the loaded column each was made from: the column itself, or the longest column
    name it starts with followed by '_' (``tenure_band_new`` from ``tenure_band``, ``signup_year`` from ``signup``);
    a feature made from no one column stands alone."""
    grouped: dict[str, list[str]] = {}
    by_length = sorted(columns, key=len, reverse=True)
    for feature in features:
        origin = next((c for c in by_length if feature == c or feature.startswith(f"{c}_")), feature)
        grouped.setdefault(origin, []).append(feature)
    return grouped


def _candidates(model: Bundle, train: pd.DataFrame, columns: list[str], first: list[str]) -> dict[str, list[str]]:
    """The model's features (in its ``train`` table) grouped by the column each was made from (``origins``), the
    columns the features ``first`` were made from first, at most ``MAX_COLUMNS``: the columns that might decide the
    target."""
    grouped = origins(model.feature_columns(train), columns)
    if model.forecasts:  # its time, and its own past as known a horizon back, are what a forecast learns from
        grouped.pop(model.time_column or "", None)
        past = set(model.meta.get("past_features") or [])
        grouped = {origin: kept for origin, features in grouped.items() if (kept := [f for f in features
                                                                                  if f not in past])}
    ahead = list(dict.fromkeys(origin for origin, features in grouped.items() if set(features) & set(first)))
    tried = (ahead + [origin for origin in grouped if origin not in ahead])[:MAX_COLUMNS]
    return {origin: grouped[origin] for origin in tried}


def _deciding(model: Bundle, train: pd.DataFrame, candidates: dict[str, list[str]], *,
              classification: bool) -> tuple[str | None, float]:
    """Of the ``candidates``, the column that alone predicts the target best on the model's ``train`` rows it did not
    learn from, and its score."""
    y = train[model.require_target()]
    kept = y.notna() & (y.map(y.value_counts()) >= 2 if classification else True)  # a class needs a row in each half
    train, y = train[kept], y[kept]
    if len(train) > MAX_ROWS:
        train, y = train.sample(MAX_ROWS, random_state=0), y.sample(MAX_ROWS, random_state=0)
    if len(train) < 10 or (classification and y.nunique() < 2):
        return None, 0.0
    y = y.astype(str) if classification else y.astype(float)
    halves, _ = cross_folds(y, 2, 0, classification=classification, groups=groups_of(model, train))
    scored = {column: _alone(train[features], y, halves, classification) for column, features in candidates.items()}
    best = max(scored, key=lambda column: scored[column], default=None)
    return best, scored[best] if best is not None else 0.0


def _computed(table: pd.DataFrame, target: str, columns: list[str]) -> tuple[tuple[str, str], str, float] | None:
    """Which two of the numeric ``columns`` the target is computed from, how, and the fit's R²: when a product, ratio,
    sum or difference of two of them, scaled and shifted, gives the target on the training rows with an R² of at
    least ``COMPUTED`` and neither column alone does. Screened on ``SCREEN_ROWS`` rows, confirmed on up to
    ``MAX_ROWS``."""
    found = _numeric_rows(table, target, columns)
    if found is None or not _is_number(table[target]):
        return None
    rows, numeric = found
    screen = rows.sample(min(len(rows), SCREEN_ROWS), random_state=0)
    y = screen[target].to_numpy(dtype=float)
    best = _best_pair(screen[numeric].to_numpy(), numeric, lambda x: _r2(y[:, None], x), COMPUTED)
    if best is None:
        return None
    a, symbol, b = best
    whole = rows.sample(min(len(rows), MAX_ROWS), random_state=0)
    y = whole[target].to_numpy(dtype=float)
    with np.errstate(all="ignore"):
        fit = float(_r2(y, ARITHMETIC[symbol](whole[a].to_numpy(), whole[b].to_numpy())))
    if fit < COMPUTED:
        return None
    pair, formula = _formula(y, whole[a], symbol, whole[b])
    return pair, formula, fit


def _compared(model: Bundle, table: pd.DataFrame, target: str,
              columns: list[str]) -> tuple[tuple[str, str], str, float] | None:
    """Which two of the numeric ``columns`` decide a yes/no target together, how they are combined, and the balanced
    accuracy that gives on training rows it did not learn from: when a threshold on a product, ratio, sum or difference
    of the two separates the classes (a recurrence's time against the end of the follow-up) as well as ``DECIDES``
    asks and neither column alone does. Screened by ROC AUC on ``SCREEN_ROWS`` rows, confirmed as the one-column check
    does (``_alone``) on up to ``MAX_ROWS``."""
    found = _numeric_rows(table, target, columns)
    if found is None:
        return None
    rows, numeric = found
    labels = rows[target].astype(str)
    if labels.nunique() != 2 or labels.value_counts().min() < 2:
        return None
    screen = rows.sample(min(len(rows), SCREEN_ROWS), random_state=0)
    positive = (screen[target].astype(str) == labels.iloc[0]).to_numpy()
    best = _best_pair(screen[numeric].to_numpy(), numeric, lambda x: _separation(positive, x), DECIDES)
    if best is None:
        return None
    a, symbol, b = best
    whole = rows.sample(min(len(rows), MAX_ROWS), random_state=0).reset_index(drop=True)
    y = whole[target].astype(str)
    halves, _ = cross_folds(y, 2, 0, classification=True, groups=groups_of(model, whole))
    with np.errstate(all="ignore"):
        combined = pd.DataFrame({"combined": ARITHMETIC[symbol](whole[a], whole[b])}).replace([np.inf, -np.inf], np.nan)
    together = _alone(combined, y, halves, classification=True)
    if together < DECIDES or max(_alone(whole[[c]], y, halves, classification=True) for c in (a, b)) >= DECIDES:
        return None
    return (a, b), f"{a} {symbol} {b}", together


def _numeric_rows(table: pd.DataFrame, target: str, columns: list[str]) -> tuple[pd.DataFrame, list[str]] | None:
    """The training rows with a target (the target, then the numeric ``columns`` as floats, infinities as gaps) and
    those columns' names; None with fewer than two such columns or ten such rows."""
    numeric = [c for c in columns if c != target and c in table.columns and _is_number(table[c])]
    if len(numeric) < 2 or target not in table.columns:
        return None
    known = table[target].notna()
    rows = table.loc[known, [target]].join(table.loc[known, numeric].astype(float).replace([np.inf, -np.inf], np.nan))
    return (rows, numeric) if len(rows) >= 10 else None


def _best_pair(x: np.ndarray, names: list[str], score: Callable[[np.ndarray], np.ndarray],
               least: float) -> tuple[str, str, str] | None:
    """The two of ``names`` (the columns of ``x``) and the arithmetic (``ARITHMETIC``) whose combination ``score``
    rates highest, as (first, symbol, second), when it rates at least ``least`` and neither column alone does."""
    alone = score(x)
    width = x.shape[1]
    found = None
    with np.errstate(all="ignore"):
        for symbol, apply in ARITHMETIC.items():
            rated = score(apply(x[:, :, None], x[:, None, :]).reshape(len(x), width * width)).reshape(width, width)
            np.fill_diagonal(rated, 0.0)
            i, j = np.unravel_index(np.argmax(rated), rated.shape)
            if rated[i, j] >= least and max(alone[i], alone[j]) < least and (found is None or rated[i, j] > found[3]):
                found = (names[i], symbol, names[j], rated[i, j])
    return found[:3] if found else None


def _separation(positive: np.ndarray, x: np.ndarray) -> np.ndarray:
    """How well a threshold on each column of ``x`` separates the ``positive`` rows from the others: its ROC AUC either
    way round (0.5 to 1), gaps at the column's median; nothing where fewer than ``MIN_PRESENT`` of the rows hold a
    number."""
    present = np.isfinite(x)
    with warnings.catch_warnings():  # a column with no number at all has no median, and is rated 0.5 below
        warnings.simplefilter("ignore", RuntimeWarning)
        filled = np.where(present, x, np.nanmedian(np.where(present, x, np.nan), axis=0))
    ranks = rankdata(filled, axis=0)
    hits, misses = positive.sum(), (~positive).sum()
    auc = (ranks[positive].sum(axis=0) - hits * (hits + 1) / 2) / max(hits * misses, 1)
    separated = np.maximum(auc, 1 - auc)
    return np.where(present.mean(axis=0) >= MIN_PRESENT, np.nan_to_num(separated, nan=0.5), 0.5)


def _r2(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The R² of the best line from each of ``x``'s columns (along the first axis) to ``y``, over the rows where both
    hold a number; nothing where fewer than ``MIN_PRESENT`` of the rows do."""
    present = np.isfinite(x) & np.isfinite(y)
    count = present.sum(axis=0)
    y, x = np.where(present, y, 0.0), np.where(present, x, 0.0)
    mean_y, mean_x = y.sum(axis=0) / np.maximum(count, 1), x.sum(axis=0) / np.maximum(count, 1)
    dy, dx = np.where(present, y - mean_y, 0.0), np.where(present, x - mean_x, 0.0)
    covariance, var_y, var_x = (dx * dy).sum(axis=0), (dy * dy).sum(axis=0), (dx * dx).sum(axis=0)
    with np.errstate(all="ignore"):
        fit = covariance**2 / (var_x * var_y)
    return np.where(count >= MIN_PRESENT * len(present), np.nan_to_num(fit, nan=0.0), 0.0)


def _formula(y: np.ndarray, a: pd.Series, symbol: str, b: pd.Series) -> tuple[tuple[str, str], str]:
    """The two columns, and the arithmetic of them with the factor and offset that give ``y`` ("100 × (totpart /
    totelg)", "wt82 − wt71"), each left out when it changes nothing; a difference is written the way round that
    needs no minus sign in front."""
    combined = ARITHMETIC[symbol](a.to_numpy(), b.to_numpy())
    present = np.isfinite(y) & np.isfinite(combined)
    factor, offset = np.polyfit(combined[present], y[present], 1)
    if symbol == "−" and factor < 0:
        a, b, factor = b, a, -factor
    said = f"{a.name} {symbol} {b.name}"
    if abs(factor - 1) < 1e-3:
        scaled = said
    elif abs(factor + 1) < 1e-3:
        scaled = f"−({said})"
    else:
        scaled = f"{factor:.4g} × ({said})"
    spread = float(np.std(y[present])) or 1.0
    shifted = "" if abs(offset) < 1e-3 * spread else f" {'+' if offset > 0 else '−'} {abs(offset):.6g}"
    return (str(a.name), str(b.name)), scaled + shifted


def _is_number(values: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)


def _alone(frame: pd.DataFrame, y: pd.Series, halves: Folds, classification: bool) -> float:
    """How well these features alone predict ``y``: a small tree fitted on one of the ``halves``, scored on the other
    and the other way round (balanced accuracy, or R²)."""
    x = np.column_stack([_numbers(frame[c]) for c in frame.columns])
    if classification:
        predicted = cross_val_predict(DecisionTreeClassifier(max_depth=DEPTH, random_state=0), x, y, cv=halves)
        return float(skm.balanced_accuracy_score(y, predicted))
    predicted = cross_val_predict(DecisionTreeRegressor(max_depth=DEPTH, random_state=0), x, y, cv=halves)
    return float(skm.r2_score(y, predicted))


def _numbers(values: pd.Series) -> np.ndarray:
    """A column as numbers a tree can split: categories by their codes, gaps below every value."""
    if not _is_number(values):
        return values.astype("category").cat.codes.to_numpy(dtype=float)  # a gap is code -1
    numbers = values.to_numpy(dtype=float)
    finite = numbers[np.isfinite(numbers)]
    return np.where(np.isfinite(numbers), numbers, (finite.min() - 1) if finite.size else 0.0)
