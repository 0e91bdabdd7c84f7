"""Choosing a model's hyperparameters on the training rows alone, within a time budget (Optuna).

A model service names the hyperparameters worth searching as a *space*: a function of an Optuna trial that
returns params. When a step's params carry ``search`` (the pipeline's modelling search gives each candidate a
budget and a metric), the service's own configuration is scored first, then the configurations that won on similar
tables (``warm_start``, from the portfolio and the deployment's history: ``dagsmith_kit.portfolio``), then Optuna's TPE
sampler proposes trials, which learn from all of those, until the budget is spent, the score has stopped improving
for ``PATIENCE`` trials (fewer when they are slow), or the candidate trails the models that ran before it or beside it
(``dagsmith_kit.halving``), to which it shows its own progress as it goes.
No trial outlives the budget: one that would not finish is not started, and one that runs past it is abandoned
between folds. Every configuration is scored by cross-validation on the training table (on folds in time order for
a forecast, each validated on times after those it learned from; on folds of whole groups where the split kept a
patient's rows together), and a trivial predictor (the class prior, or the
mean) is scored on the same folds: the pipeline compares candidates by these scores and refuses a model that
learned nothing, without looking at the held-out rows.
"""

from __future__ import annotations

import json
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import is_classifier
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.metrics import f1_score, get_scorer, make_scorer, precision_recall_fscore_support

from dagsmith_kit.folds import validation_splits
from dagsmith_kit.bundle import Bundle, prediction_frame, probabilities_by_label, probability_columns
from dagsmith_kit.halving import PROGRESS_FILE, RIVALS_FILE, Rival, Rungs, rivals_of, show_progress
from dagsmith_kit.log_target import LogTarget, suits_log
from dagsmith_kit.metrics import ALIASES, METRICS
from dagsmith_kit.portfolio import clean
from dagsmith_kit.service import ServiceError

#: What the search writes beside the model: the metric, the scores and the trials (read by the pipeline).
SEARCH_FILE = "search.json"
#: The chosen configuration's predictions on the training rows it was validated on, each made by a model that did
#: not see the row (out of fold): a ``row`` position in the training table, ``prediction`` and ``proba_<label>``.
#: The pipeline blends candidates from these without loading their models.
VALIDATION_FILE = "validation_predictions.parquet"
#: A model must beat the trivial predictor's validation score by at least this much.
MARGIN = 1e-3
#: The scales of the target a search may try beside the target itself, as its history says them.
SCALES = {"log_target": "on log(target)", "past_change": "on its change from its value a horizon back"}
#: Metrics a search may compare by, as the scikit-learn scorers that compute them (greater is better).
SCORERS = {name: metric.scorer for name, metric in METRICS.items() if metric.scorer} | {
    alias: METRICS[name].scorer for alias, name in ALIASES.items()}
#: Binary metrics about one class: the minority class is the one people ask about (churners, defaults, fraud).
ONE_CLASS_METRICS = {name for name, metric in METRICS.items() if metric.one_class}
#: The search stops once this many configurations in a row have not raised the best score by ``IMPROVEMENT``.
PATIENCE, IMPROVEMENT = 15, 1e-4
#: Where configurations are slow against the budget (a large table, or a short budget), fewer do: ``SLOW_PATIENCE`` in
#: a row without raising the score, over at least ``STALL_SHARE`` of the budget, stop the search as well.
SLOW_PATIENCE, STALL_SHARE = 5, 1 / 3
#: Configurations that won on similar tables a search accepts at most.
MAX_WARM_STARTS = 6

Space = Callable[[Any], dict[str, Any]]
Build = Callable[[dict[str, Any]], Any]


@dataclass(frozen=True)
class Search:
    """What the pipeline asks of one candidate: a time budget and the metric candidates are compared by."""

    budget_seconds: float
    metric: str
    folds: int = 3
    seed: int = 42
    warm_start: tuple[dict[str, Any], ...] = ()  # configurations that won on similar tables, nearest first
    rivals: tuple[Rival, ...] = ()  # candidates of the same search that finished before this one started
    output: Path | None = None  # its output folder: its progress is shown and its rivals' handed over there

    @classmethod
    def from_params(cls, params: dict[str, Any], output: Path | None = None) -> Search | None:
        """The search the params ask for, or None; ``output``: the candidate's output folder, where it shows its
        progress and its rivals' progress is handed over while it runs."""
        raw = params.get("search")
        if not raw:
            return None
        if not isinstance(raw, dict):
            raise ServiceError("the 'search' parameter must be an object with budget_seconds and metric")
        budget, metric = raw.get("budget_seconds"), str(raw.get("metric", ""))
        if not isinstance(budget, int | float) or not budget > 0:
            raise ServiceError(f"search.budget_seconds must be a positive number, got {budget!r}")
        if metric not in SCORERS:
            raise ServiceError(f"unknown search metric '{metric}'; use one of {', '.join(sorted(SCORERS))}")
        folds = raw.get("folds", 3)
        if not isinstance(folds, int) or folds < 2:
            raise ServiceError(f"search.folds must be a whole number of at least 2, got {folds!r}")
        warm = raw.get("warm_start") or []
        if not isinstance(warm, list):
            raise ServiceError("search.warm_start must be a list of configurations")
        configs = tuple(config for config in map(clean, warm[:MAX_WARM_STARTS]) if config)
        return cls(float(budget), metric, folds, int(raw.get("seed", 42)), configs, rivals_of(raw.get("rivals")),
                   output)


@dataclass
class Outcome:
    """The configuration chosen, its validation score and the trivial predictor's on the same folds."""

    params: dict[str, Any]
    score: float
    baseline: float
    default_score: float
    trials: int
    seconds: float
    folds: str
    history: list[dict[str, Any]] = field(default_factory=list)
    validation: pd.DataFrame | None = None
    log_target: bool = False  # the model learns log(target): it validated better than on the target itself
    past_change: bool = False  # the forecast learns its change from its value a horizon back (its level lost)
    first_useful_seconds: float | None = None  # when a configuration first beat the trivial predictor
    best_seconds: float = 0.0  # when the chosen configuration was found
    stopped: str = "the given parameters only"  # why the search ended
    progress: list[tuple[float, float]] = field(default_factory=list)  # (seconds, best score) at each improvement
    raced: list[str] = field(default_factory=list)  # the rivals it was judged against, given and handed over
    shown: Path | None = None  # the output folder its progress is shown in while it runs (``halving.PROGRESS_FILE``)

    def found(self, started: float) -> None:
        """Note the time since ``started`` at which the current best configuration was found (and, when it is the
        first to beat the trivial predictor, a first useful model), and show the progress to the rivals."""
        self.best_seconds = round(time.monotonic() - started, 3)
        self.progress.append((self.best_seconds, round(self.score, 6)))
        if self.shown:
            show_progress(self.shown, self.progress)
        if self.first_useful_seconds is None and self.score > self.baseline + MARGIN:
            self.first_useful_seconds = self.best_seconds


def _scorer(metric: str, y: pd.Series) -> Callable:
    name = SCORERS[metric]
    classes = y.value_counts()
    if metric in ONE_CLASS_METRICS and len(classes) == 2:
        minority = classes.index[-1]
        scores = {"f1": f1_score,
                  "recall": lambda t, p, **kw: precision_recall_fscore_support(t, p, **kw, average="binary")[1],
                  "precision": lambda t, p, **kw: precision_recall_fscore_support(t, p, **kw, average="binary")[0]}
        return make_scorer(scores[metric], pos_label=minority, zero_division=0)
    if metric in ONE_CLASS_METRICS:
        return get_scorer(f"{name}_macro")
    if name == "roc_auc" and len(classes) > 2:
        return get_scorer("roc_auc_ovr")
    return get_scorer(name)


class OutOfTime(Exception):
    """A configuration's validation ran past the search's deadline; it is abandoned, not scored."""


def _cross_score(estimator_for: Callable[[], Any], X: pd.DataFrame, y: pd.Series, splits: list,
                 scorer, classes: list | None, deadline: float = math.inf) -> tuple[float, pd.DataFrame]:
    """The mean score over the folds, and the out-of-fold predictions it was earned with (``classes``: the
    target's labels in scikit-learn's order, for a classifier's probabilities). Past ``deadline`` (a monotonic
    time) no further fold starts: ``OutOfTime``."""
    scores, predicted = [], []
    for fit_rows, score_rows in splits:
        if time.monotonic() > deadline:
            raise OutOfTime
        estimator = estimator_for()
        estimator.fit(X.iloc[fit_rows], y.iloc[fit_rows])
        held_out = X.iloc[score_rows]
        scores.append(float(scorer(estimator, held_out, y.iloc[score_rows])))
        predicted.append(prediction_frame(estimator, held_out, classes).assign(row=score_rows))
    score = float(np.mean(scores))
    return (score if math.isfinite(score) else -math.inf), pd.concat(predicted, ignore_index=True)


def tune(build: Build, params: dict[str, Any], space: Space | None, X: pd.DataFrame, y: pd.Series,
         search: Search, order: pd.Series | None = None, *, groups: pd.Series | None = None,
         anchor: Callable[[Any], Any] | None = None) -> Outcome:
    """Score the given params, then the warm starts and Optuna's proposals over ``space`` until the budget is spent
    or the score stops improving; the best configuration wins (``order``: the rows' times, when the model forecasts;
    ``groups``: each row's group, when the split kept groups apart;
    ``anchor``: for a forecast from its past, what wraps a model to learn the change from its value a horizon back,
    which it does unless the target itself validates better, as a model of log(target) is tried for a wide positive
    target).

    The given configuration's failure is the service's failure (its error says why); a failing trial only
    loses its turn. A trial that would not finish within the budget, judged by the time configurations have
    taken so far, is not started.
    """
    started = time.monotonic()
    classification = is_classifier(build(params))
    splits, folds = validation_splits(y, classification, search.folds, search.seed, order, groups)
    scorer = _scorer(search.metric, y)
    classes = list(np.unique(y)) if classification else None
    trivial = DummyClassifier(strategy="prior") if classification else DummyRegressor()
    baseline, _ = _cross_score(lambda: trivial, X, y, splits, scorer, classes)

    def anchored(config: dict[str, Any]) -> Any:
        """A forecast from its past learns its change from it by default: at worst, no change is the naive forecast
        it is judged against."""
        return anchor(build(config)) if anchor is not None else build(config)

    began = time.monotonic()
    default, validation = _cross_score(lambda: anchored(params), X, y, splits, scorer, classes)
    given_seconds = time.monotonic() - began
    said = "as given" + (f", {SCALES['past_change']}" if anchor is not None else "")
    best = Outcome(dict(params), default, baseline, default, 1, 0.0, folds,
                   [{"params": said, "score": round(default, 6)}], validation, past_change=anchor is not None,
                   shown=search.output)
    best.found(started)
    deadline = started + search.budget_seconds
    rungs = Rungs(search.budget_seconds, search.rivals, search.output / RIVALS_FILE if search.output else None)
    other: tuple[str, Build] | None = None  # the other scale of the target, kept when it validates better
    if anchor is not None:
        other = "on the target itself", build
    elif not classification and suits_log(y):
        other = SCALES["log_target"], lambda config: LogTarget(build(config))
    won = other is not None and _try_scale(best, other[0], lambda: other[1](params), X, y, splits, scorer, deadline,
                                           started)
    if won:
        best.past_change, best.log_target = False, anchor is None
    scaled = other[1] if won and other is not None else anchored
    if space is not None:
        def score(config: dict[str, Any]) -> float:
            result, predicted = _cross_score(lambda: scaled(config), X, y, splits, scorer, classes, deadline)
            if result > best.score:
                best.params, best.score, best.validation = {**params, **config}, result, predicted
                best.found(started)
            return result

        best.stopped = _search_space(best, space, score, search, rungs, started, given_seconds)
    best.raced = [rival.name for rival in rungs.rivals]
    best.seconds = round(time.monotonic() - started, 3)
    return best


def _try_scale(best: Outcome, said: str, estimator_for: Callable[[], Any], X: pd.DataFrame, y: pd.Series,
               splits: list, scorer, deadline: float, started: float) -> bool:
    """Score the given configuration on another scale of the target (``said``: which, in words) and keep it when it
    validates better (unless the budget runs out first: it is an option, not the service's answer); whether it was
    kept."""
    try:
        scored, validation = _cross_score(estimator_for, X, y, splits, scorer, None, deadline)
    except OutOfTime:
        return False
    best.trials += 1
    best.history.append({"params": f"as given, {said}", "score": round(scored, 6)})
    if scored <= best.default_score + MARGIN:
        return False
    best.score, best.validation = scored, validation
    best.found(started)
    return True


def _search_space(best: Outcome, space: Space, score: Callable[[dict[str, Any]], float], search: Search,
                  rungs: Rungs, started: float, given_seconds: float) -> str:
    """Optuna trials over ``space``, the warm starts first, until the budget is spent or ``PATIENCE`` trials in a row
    bring nothing (``score`` keeps the best configuration in ``best``); returns why the search stopped. How long a
    trial takes is judged by the configurations scored so far (the given one's ``given_seconds`` first), never by
    importing Optuna, which on a busy machine took as long as the whole budget of a small table."""
    import optuna

    spent = [given_seconds]
    since_best = [0]
    gained = [time.monotonic()]  # when the best score last rose by ``IMPROVEMENT``
    stopped = ["the budget was spent"]

    def objective(trial) -> float:
        stalled = time.monotonic() - gained[0]
        if since_best[0] >= PATIENCE or (since_best[0] >= SLOW_PATIENCE
                                         and stalled >= STALL_SHARE * search.budget_seconds):
            stopped[0] = (f"the score stopped improving ({since_best[0]} configurations in a row, over "
                          f"{stalled:.0f} s, brought nothing)")
            trial.study.stop()
            raise optuna.TrialPruned("the score stopped improving")
        if time.monotonic() - started + max(spent) > search.budget_seconds:
            trial.study.stop()
            raise optuna.TrialPruned("no time left for another configuration")
        if behind := rungs.behind(time.monotonic() - started, best.score, search.metric):
            stopped[0] = behind
            trial.study.stop()
            raise optuna.TrialPruned("the candidate trails its rivals")
        before, began = best.score, time.monotonic()
        try:
            result = score(space(trial))
        except OutOfTime:
            trial.study.stop()
            raise optuna.TrialPruned("the budget ran out during this configuration") from None
        finally:
            since_best[0] += 1
        spent.append(time.monotonic() - began)
        if best.score > before + IMPROVEMENT:
            since_best[0], gained[0] = 0, time.monotonic()
        return result

    remaining = search.budget_seconds - (time.monotonic() - started)
    if remaining <= spent[0]:
        return "the budget was spent on the given parameters"
    if behind := rungs.behind(time.monotonic() - started, best.score, search.metric):
        return behind
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=search.seed))
    for config in search.warm_start:
        study.enqueue_trial(config, skip_if_exists=True)
    with warnings.catch_warnings():  # a remembered value outside this service's ranges is tried as it is
        warnings.simplefilter("ignore", UserWarning)
        study.optimize(objective, timeout=remaining, catch=(Exception,))
    done = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    best.trials += len(done)
    best.history += [{"params": t.params, "score": round(t.value, 6),
                      **({"warm_start": True} if "fixed_params" in t.system_attrs else {})} for t in done]
    return stopped[0]


def require_better_than_baseline(outcome: Outcome, metric: str) -> None:
    """A model no better than predicting the class prior or the mean has learned nothing worth shipping."""
    if not outcome.score > outcome.baseline + MARGIN:
        raise ServiceError(f"no better than the trivial baseline on validation: {metric} {outcome.score:.4f} "
                           f"vs {outcome.baseline:.4f} for a trivial predictor, the class prior or the mean "
                           f"({outcome.folds}); "
                           "the features carry no signal this model can use")


def record(out: Bundle, search: Search, outcome: Outcome, features: list[str]) -> None:
    """The validation figures in metrics.json and search.json (with the model's feature columns), the
    out-of-fold predictions, and a paragraph of the report."""
    out.write_metrics({"validation_score": round(outcome.score, 6), "validation_baseline": round(outcome.baseline, 6),
                       "search_trials": outcome.trials, "search_seconds": outcome.seconds}
                      | ({"search_first_useful_seconds": outcome.first_useful_seconds}
                         if outcome.first_useful_seconds is not None else {}))
    chosen = {k: v for k, v in outcome.params.items() if k != "search"}
    if outcome.validation is not None:
        outcome.validation.to_parquet(out.path / VALIDATION_FILE, index=False)
    (out.path / SEARCH_FILE).write_text(json.dumps({
        "metric": search.metric, "budget_seconds": search.budget_seconds, "folds": outcome.folds,
        "score": outcome.score, "baseline": outcome.baseline, "default_score": outcome.default_score,
        "params": chosen, "trials": outcome.trials, "seconds": outcome.seconds, "features": features,
        "log_target": outcome.log_target, "past_change": outcome.past_change,
        "first_useful_seconds": outcome.first_useful_seconds,
        "best_seconds": outcome.best_seconds,
        "stopped": outcome.stopped, "warm_starts": len(search.warm_start), "progress": outcome.progress,
        "rivals": outcome.raced,
        "history": _kept_history(outcome.history),
    }, default=str, indent=2), encoding="utf-8")
    (out.path / PROGRESS_FILE).unlink(missing_ok=True)  # search.json holds it now
    warm = f", {len(search.warm_start)} of them won on similar tables" if search.warm_start else ""
    tuned = (f"{outcome.trials - 1} more configurations tried{warm}; the best scored {outcome.score:.4f} "
             f"(given parameters: {outcome.default_score:.4f}); the search stopped because {outcome.stopped}"
             if outcome.trials > 1 else "the given parameters only")
    scale = (" The model learns the logarithm of the target, which validated better." if outcome.log_target else
             " The model learns the target's change from its value a horizon back." if outcome.past_change else "")
    out.append_report(f"Validation ({outcome.folds}, {search.metric}): {outcome.score:.4f} against "
                      f"{outcome.baseline:.4f} for a trivial predictor; {tuned}, in {outcome.seconds:.1f} s of a "
                      f"{search.budget_seconds:.0f} s budget.{scale}")


def _kept_history(history: list[dict[str, Any]], best: int = 10) -> list[dict[str, Any]]:
    """The ``best`` configurations by score, and every remembered one (a warm start) wherever it ranked, so a
    person can see what the remembered configurations were worth here."""
    ranked = sorted(history, key=lambda h: -h["score"])
    return ranked[:best] + [h for h in ranked[best:] if h.get("warm_start")]


def score_predictions(metric: str, y: pd.Series, predicted: pd.DataFrame) -> float:
    """``metric`` (greater is better) of predictions shaped like predictions.parquet against ``y`` on the same rows.

    This is how predictions are judged without their model: a blend of candidates against its members. Labels
    are compared as text, the form they take in ``proba_<label>`` column names; a metric on labels reads a
    classifier's most probable class."""
    from sklearn import metrics

    if not probability_columns(predicted):
        truth, guess = y.to_numpy(dtype=float), predicted["prediction"].to_numpy(dtype=float)
        regression = {"r2": metrics.r2_score, "rmse": metrics.root_mean_squared_error,
                      "mae": metrics.mean_absolute_error, "mape": metrics.mean_absolute_percentage_error}
        value = regression[metric](truth, guess)
        return float(value if metric == "r2" else -value)
    labels, columns = probabilities_by_label(predicted)
    truth, proba = y.astype(str).to_numpy(), columns.to_numpy(dtype=float)
    if SCORERS[metric] == "roc_auc":
        return float(metrics.roc_auc_score(truth == labels[1], proba[:, 1]) if len(labels) == 2 else
                     metrics.roc_auc_score(truth, proba / proba.sum(axis=1, keepdims=True), multi_class="ovr",
                                           labels=labels))
    if metric == "log_loss":
        return -float(metrics.log_loss(truth, proba, labels=labels))
    guess = np.asarray(labels)[proba.argmax(axis=1)]
    if metric in ONE_CLASS_METRICS:
        counts = y.astype(str).value_counts()
        chosen = {"pos_label": counts.index[-1], "average": "binary"} if len(labels) == 2 else {"average": "macro"}
        precision, recall, f1, _ = metrics.precision_recall_fscore_support(truth, guess, zero_division=0, **chosen)
        return float({"f1": f1, "recall": recall, "precision": precision}[metric])
    named = {"accuracy": metrics.accuracy_score, "balanced_accuracy": metrics.balanced_accuracy_score,
             "f1_macro": lambda t, g: metrics.f1_score(t, g, average="macro", zero_division=0)}
    return float(named[metric](truth, guess))
