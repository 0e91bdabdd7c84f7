"""A model service's search space against a candidate space, judged on tables the suite never uses.

A wider or narrower space is a bet on tables nobody has seen, so it is judged on the goal set's dev tables (the
tables ``make portfolio`` learns from, which no suite task uses) rather than on the suite's. On each supervised table
(sampled to ``--max-rows``), both spaces get the same search: ``--trials`` TPE trials scored by 3-fold
cross-validation on 80% of the rows, for each of ``--seeds`` seeds; the best configuration is refitted on those rows
and scored on the held-out 20% (ROC AUC, one-vs-rest for several classes, or R²). It prints one JSON line per table
and a summary: mean and median held-out difference, and on how many tables the candidate was better or worse.

The searches run in this process on the service's own model builder (its ``main.py``), on the raw table as the
portfolio prepares it, with a fixed number of trials rather than a time budget, so that the spaces, not the
machine's load, make the difference.

    python -m dagsmith.bench.spaces lightgbm_classifier --candidate my_space.py [--function space]

The candidate file defines ``space(trial)`` (or ``--function``) returning the trial's suggestions, as a service's
does.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dagsmith.bench.portfolio import MAX_ROWS, SERVICES, Case, build_cases, builder_and_space, prepared

Space = Callable[[Any], dict[str, Any]]
#: Cross-validation folds per trial, and the share of a table held out for the final score.
FOLDS, HELD_OUT = 3, 0.2
#: Least rows of a class for a classification table to be searched (each fold needs some of every class).
MIN_CLASS_ROWS = 10


def load_space(path: Path, function: str = "space") -> Space:
    """The candidate space: ``function`` of the Python file at ``path``."""
    spec = importlib.util.spec_from_file_location("candidate_space", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"error: --candidate: {path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not callable(found := getattr(module, function, None)):
        raise SystemExit(f"error: --candidate: {path} defines no function {function}(trial)")
    return found


def _kind_of(service: str) -> str:
    kinds = [kind for kind, services in SERVICES.items() if service in services]
    if not kinds:
        known = ", ".join(sorted(s for services in SERVICES.values() for s in services))
        raise SystemExit(f"error: {service} has no search space to compare; one of: {known}")
    return kinds[0]


@dataclass(frozen=True)
class Split:
    """A table's training and held-out rows, and how a search on it is scored."""

    x_train: Any
    x_test: Any
    y_train: Any
    y_test: Any
    regression: bool
    several: bool  # more than two classes

    @property
    def scoring(self) -> str:
        return "r2" if self.regression else "roc_auc_ovr" if self.several else "roc_auc"


def _split(case: Case, service: str) -> Split | None:
    """The case's rows as ``service`` reads them, split once for every search on it; None for an unusable table."""
    from sklearn.model_selection import train_test_split

    X, y = prepared(case, service)
    regression = case.kind == "regression"
    if not regression:
        keep = y.map(y.value_counts()) >= MIN_CLASS_ROWS
        X, y = X[keep], y[keep]
    if X.empty or y.nunique() < 2:
        return None
    parts = train_test_split(X, y, test_size=HELD_OUT, random_state=42, stratify=None if regression else y)
    return Split(*parts, regression=regression, several=not regression and y.nunique() > 2)


def _search(build: Callable[[dict], Any], space: Space, split: Split, trials: int, seed: int) -> tuple[float, float]:
    """(best cross-validated score, held-out score of its refit) of one TPE search."""
    import optuna
    from sklearn.metrics import r2_score, roc_auc_score
    from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score

    folds = (KFold if split.regression else StratifiedKFold)(FOLDS, shuffle=True, random_state=42)

    def objective(trial: Any) -> float:
        return float(cross_val_score(build(space(trial)), split.x_train, split.y_train, cv=folds,
                                     scoring=split.scoring).mean())

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=seed))
    study.optimize(objective, n_trials=trials)
    model = build(study.best_params).fit(split.x_train, split.y_train)
    if split.regression:
        return study.best_value, float(r2_score(split.y_test, model.predict(split.x_test)))
    proba = model.predict_proba(split.x_test)
    held = roc_auc_score(split.y_test, proba, multi_class="ovr", labels=list(model.classes_)) if split.several \
        else roc_auc_score(split.y_test == model.classes_[1], proba[:, 1])
    return study.best_value, float(held)


def compare(service: str, candidate: Space, *, tables: int, trials: int, seeds: int, max_rows: int) -> list[dict]:
    """Per table of the service's kind: the shipped and the candidate space's validation and held-out scores, each
    the mean over the seeds."""
    kind = _kind_of(service)
    build, shipped = builder_and_space(service, kind)
    rows = []
    for case in [c for c in build_cases(10 * tables) if c.kind == kind][:tables]:
        if len(case.frame) > max_rows:
            case = Case(case.name, case.task_type, case.target, case.frame.sample(max_rows, random_state=0))
        if (split := _split(case, service)) is None:
            continue
        row: dict[str, Any] = {"table": case.name, "task_type": case.task_type, "rows": len(case.frame)}
        for label, space in (("shipped", shipped), ("alternative", candidate)):
            found = [_search(build, space, split, trials, seed) for seed in range(seeds)]
            row[f"{label}_validation"] = round(statistics.fmean(f[0] for f in found), 4)
            row[f"{label}_held_out"] = round(statistics.fmean(f[1] for f in found), 4)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def summary(rows: list[dict]) -> str:
    """The comparison as a table: the candidate's held-out difference from the shipped space."""
    lines = ["| tables | held out, shipped | candidate | mean difference | median | candidate better / worse |",
             "|---|---|---|---|---|---|"]
    if rows:
        differences = [r["alternative_held_out"] - r["shipped_held_out"] for r in rows]
        lines.append(f"| {len(rows)} | {statistics.fmean(r['shipped_held_out'] for r in rows):.4f} | "
                     f"{statistics.fmean(r['alternative_held_out'] for r in rows):.4f} | "
                     f"{statistics.fmean(differences):+.4f} | {statistics.median(differences):+.4f} | "
                     f"{sum(d > 0 for d in differences)} / {sum(d < 0 for d in differences)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("service", help="a model service with a search space, e.g. lightgbm_classifier")
    parser.add_argument("--candidate", type=Path, required=True, help="Python file defining the candidate space")
    parser.add_argument("--function", default="space", help="the candidate's function name (default: space)")
    parser.add_argument("--tables", type=int, default=100, help="tables to search (default: every dev table of the "
                                                                  "service's kind)")
    parser.add_argument("--trials", type=int, default=20, help="TPE trials per search")
    parser.add_argument("--seeds", type=int, default=2, help="searches per space and table")
    parser.add_argument("--max-rows", type=int, default=3_000, help=f"rows a table is sampled to (at most {MAX_ROWS})")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args(argv)
    candidate = load_space(args.candidate, args.function)
    warnings.simplefilter("ignore")  # convergence and categorical-range warnings of tried configurations
    rows = compare(args.service, candidate, tables=args.tables, trials=args.trials, seeds=args.seeds,
                   max_rows=min(args.max_rows, MAX_ROWS))
    print("\n" + summary(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
