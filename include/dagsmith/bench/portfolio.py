"""The model search's portfolio: built on real tables the suite never uses, measured on the suite's own tables.

``build`` (``make portfolio``): on the supervised tables of the goal set's dev part (R tables neither the suite nor
the intent tests use), every shipped model service with a search space searches for ``--budget`` seconds; the
configuration it chooses is kept, with the table's meta-features, in ``dagsmith_kit/portfolio.json``.

``measure``: on the suite's supervised tasks (tables the portfolio never saw), each such service searches twice within
the same budget, cold and warm-started from the portfolio's nearest configurations as the planner would start it;
it prints the validation score, when the chosen configuration was found, when the search ended (it stops once the
score stops improving) and when a first configuration beat the trivial predictor.

The searches run in this process on the shipped services' own model builders and search spaces, on the raw table
(numeric-only models get its numeric columns, median-filled): hyperparameters, not preparation, are what is learned.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pandas as pd

from dagsmith_kit import models, portfolio, search
from dagsmith_kit.models import LIGHTGBM_REFUSED

CATALOG = Path(__file__).resolve().parents[3] / "microservices"
#: The shipped services whose search starts from the portfolio: (model builder, search space) in their main.py. Linear
#: models search one setting, which a few trials find anyway.
SERVICES = {
    "classification": {"lightgbm_classifier": ("booster", "lightgbm_space"),
                       "gradient_boosting_classifier": ("booster", "space"),
                       "random_forest_classifier": ("forest", "forest_space")},
    "regression": {"lightgbm_regressor": ("booster", "lightgbm_space"),
                   "gradient_boosting_regressor": ("booster", "space"),
                   "random_forest_regressor": ("forest", "forest_space")},
}
#: Services that read text columns and missing values natively; the others get the numeric columns, median-filled.
NATIVE = {"lightgbm_classifier", "gradient_boosting_classifier", "lightgbm_regressor", "gradient_boosting_regressor"}
METRIC = {"binary_classification": "roc_auc", "multiclass_classification": "roc_auc", "regression": "r2"}
#: Rows a table is sampled down to: the portfolio learns settings, not the largest tables' patterns.
MAX_ROWS = 10_000


@dataclass(frozen=True)
class Case:
    """A table to search: its name, task and target."""

    name: str
    task_type: str
    target: str
    frame: pd.DataFrame

    @property
    def kind(self) -> str:
        return "regression" if self.task_type == "regression" else "classification"

    def table(self) -> portfolio.Table:
        features = self.frame.drop(columns=[self.target])
        return portfolio.Table.of_columns(self.task_type, len(features), [str(d) for d in features.dtypes])


def service_module(name: str) -> ModuleType:
    """A shipped service's ``main.py`` as a module: its model builder and search space."""
    spec = importlib.util.spec_from_file_location(f"portfolio_{name}", CATALOG / name / "main.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def builder_and_space(service: str, kind: str) -> tuple[Any, Any]:
    """The service's model builder and search space (``SERVICES``), from its ``main.py`` or, for a space the service
    takes from the kit (the forests' ``forest_space``), from ``dagsmith_kit.models``."""
    module = service_module(service)
    return tuple(getattr(module, name, None) or getattr(models, name) for name in SERVICES[kind][service])


def prepared(case: Case, service: str) -> tuple[pd.DataFrame, pd.Series]:
    """The case's features and target as ``service`` reads them: native models get the raw columns (names LightGBM
    accepts), the others the numeric ones, median-filled."""
    frame = case.frame.dropna(subset=[case.target])
    X = frame.drop(columns=[case.target])
    # identifiers and free text (a distinct value in most rows) teach nothing that carries over
    X = X[[c for c in X.columns if pd.api.types.is_numeric_dtype(X[c]) or X[c].nunique() < 0.5 * len(X)]]
    if service in NATIVE:
        X = X.rename(columns=lambda c: "".join("_" if ch in LIGHTGBM_REFUSED else ch for ch in str(c)))
    else:
        X = X.select_dtypes("number").astype(float)
        X = X.fillna(X.median()).fillna(0.0)
    y = frame[case.target]
    return X, (y.astype(float) if case.kind == "regression" else y.astype(str))


def run_search(case: Case, service: str, budget: float, warm: tuple[dict, ...] = ()) -> search.Outcome | None:
    """``service``'s search on the case's table, or None when the service cannot read it."""
    X, y = prepared(case, service)
    if X.empty or y.nunique() < 2:
        return None
    build, space = builder_and_space(service, case.kind)
    return search.tune(build, {}, space, X, y, search.Search(budget, METRIC[case.task_type], warm_start=warm))


def build_cases(limit: int) -> list[Case]:
    """Up to ``limit`` supervised tables of the goal set's dev part, the task types in turn, one goal per table."""
    from dagsmith.bench.goals import load_part, load_table

    by_type: dict[str, list[Case]] = {}
    seen: set[str] = set()
    for goal in load_part("dev"):
        if goal.task_type not in METRIC or goal.dataset in seen or not goal.target:
            continue
        seen.add(goal.dataset)
        frame = load_table(goal)
        if goal.target in frame.columns:
            frame = frame.sample(min(len(frame), MAX_ROWS), random_state=0)
            by_type.setdefault(goal.task_type, []).append(Case(goal.dataset, goal.task_type, goal.target, frame))
    cases = [case for group in zip(*by_type.values(), strict=False) for case in group]
    return cases[:limit]


def measure_cases(limit: int, max_rows: int) -> list[Case]:
    """Up to ``limit`` of the suite's supervised tasks of at most ``max_rows`` rows, the task types in turn (the tables
    the suite is scored on)."""
    from dagsmith.bench.suite import load_suite

    by_type: dict[str, list[Case]] = {}
    for task in load_suite():
        if task.task_type in METRIC and task.target:
            frame = task.frame()
            if len(frame) > max_rows:
                continue
            frame = frame.sample(min(len(frame), MAX_ROWS), random_state=0)
            by_type.setdefault(task.task_type, []).append(Case(task.id, task.task_type, task.target, frame))
    cases = [case for group in zip(*by_type.values(), strict=False) for case in group]
    return cases[:limit]


def build(limit: int, budget: float, out: Path) -> None:
    entries = []
    cases = build_cases(limit)
    for case in cases:
        for service in SERVICES[case.kind]:
            outcome = run_search(case, service, budget)
            if outcome is None or not outcome.score > outcome.baseline + search.MARGIN:
                continue
            params = portfolio.clean({k: v for k, v in outcome.params.items() if k != "search"})
            if params:
                entries.append({"service": service, "table": case.table().stored(), "params": params,
                                "score": round(outcome.score, 4), "default_score": round(outcome.default_score, 4),
                                "source": case.name})
            print(f"{case.name:40} {service:30} {outcome.default_score:.4f} -> {outcome.score:.4f}", flush=True)
    out.write_text(json.dumps({
        "version": 1, "built": time.strftime("%Y-%m-%d"), "budget_seconds": budget,
        "tables": sorted(case.name for case in cases),
        "about": "configurations the shipped services' searches chose on the goal set's dev tables "
                 "(python -m dagsmith.bench.portfolio build); the benchmark suite's tables are not among them",
        "entries": entries}, indent=1) + "\n", encoding="utf-8")
    print(f"{len(entries)} configurations from {len(cases)} tables written to {out}")


def measure(limit: int, budget: float, max_rows: int) -> list[dict[str, Any]]:
    built_on = set(json.loads(portfolio.PORTFOLIO_FILE.read_text(encoding="utf-8"))["tables"])
    rows = []
    for case in measure_cases(limit, max_rows):
        assert case.name not in built_on
        for service in SERVICES[case.kind]:
            warm = tuple(w.params for w in portfolio.nearest(portfolio.shipped(), service, case.table()))
            cold, started = run_search(case, service, budget), run_search(case, service, budget, warm)
            if cold is None or started is None:
                continue
            row: dict[str, Any] = {"table": case.name, "task_type": case.task_type, "service": service}
            for label, outcome in (("cold", cold), ("warm", started)):
                row |= {f"{label}_score": round(outcome.score, 4), f"{label}_seconds": outcome.seconds,
                        f"{label}_best_seconds": outcome.best_seconds,
                        f"{label}_first_useful_seconds": outcome.first_useful_seconds}
            rows.append(row)
            print(json.dumps(row), flush=True)
    _summary(rows)
    return rows


def _summary(rows: list[dict]) -> None:
    print("\n| task type | searches | score cold | score warm | mean difference | warm at or above cold "
          "| best found s cold / warm | search s cold / warm | first useful s (median) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for kind in [*METRIC, "all"]:
        group = [r for r in rows if kind in ("all", r["task_type"])]
        if not group:
            continue

        def mean(key: str, group: list[dict] = group) -> float:
            return statistics.fmean(r[key] for r in group)

        def median(key: str, group: list[dict] = group) -> float:
            return statistics.median(r[key] for r in group)

        useful = [r["warm_first_useful_seconds"] for r in group if r["warm_first_useful_seconds"] is not None]
        print(f"| {kind} | {len(group)} | {mean('cold_score'):.4f} | {mean('warm_score'):.4f} | "
              f"{mean('warm_score') - mean('cold_score'):+.4f} | "
              f"{sum(r['warm_score'] >= r['cold_score'] for r in group)} of {len(group)} | "
              f"{median('cold_best_seconds'):.1f} / {median('warm_best_seconds'):.1f} | "
              f"{median('cold_seconds'):.1f} / {median('warm_seconds'):.1f} | "
              f"{statistics.median(useful) if useful else float('nan'):.2f} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["build", "measure"])
    parser.add_argument("--tables", type=int, default=12, help="tables to search")
    parser.add_argument("--budget", type=float, default=20.0, help="seconds per service and table")
    parser.add_argument("--max-rows", type=int, default=MAX_ROWS, help="measure: only tables up to this many rows")
    parser.add_argument("--out", type=Path, default=portfolio.PORTFOLIO_FILE)
    parser.add_argument("--json", type=Path, help="measure: also write the rows here")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # convergence and categorical-range warnings of tried configurations
    if args.command == "build":
        build(args.tables, args.budget, args.out)
    else:
        rows = measure(args.tables, args.budget, args.max_rows)
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
