"""The benchmark's report: our figures beside the published ones, as Markdown, JSON and PNG plots.

Everything here is computed from the persisted per-task results, so a report can be rebuilt at any time
(``dagsmith bench --report-only``) and partial runs report what they have.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dagsmith.bench.experiments import CONFIGURATIONS, Degradation
from dagsmith.bench.peers import PeerResult
from dagsmith.execution.quality import BASELINE_OF
from dagsmith.bench.results import TaskResult
from dagsmith.bench.runner import COHORTS
from dagsmith.bench.peer_report import peer_tasks, peers_markdown, peers_summary
from dagsmith.bench.stats import figure, mean, percentile, rate_of, table
from dagsmith.models.catalog import Stage

#: BENCHMARK.md's published figures (150 tasks, GPT-4 reasoner).
PUBLISHED = {
    "full": {"success_rate": 0.847, "median_seconds": 143, "p90_seconds": 487, "auc": 0.81, "nrmse": 0.24},
    "no-history": {"success_rate": 0.793, "median_seconds": 156, "p90_seconds": 521, "auc": 0.79, "nrmse": 0.26},
    "documentation": {"success_rate": 0.680, "median_seconds": 189, "p90_seconds": 673, "auc": 0.76, "nrmse": 0.29},
    "semantic-only": {"success_rate": 0.713, "median_seconds": 167, "p90_seconds": 589, "auc": 0.77, "nrmse": 0.27},
    "manual": {"success_rate": 0.980, "median_seconds": 3240, "p90_seconds": 5890, "auc": 0.84, "nrmse": 0.21},
}
PUBLISHED_SELECTION = {"overall": 0.873, "documentation": 0.707, "preprocessing": 0.913,
                       "feature engineering": 0.887, "modelling": 0.893, "evaluation": 0.940}
PUBLISHED_BY_TYPE = {"classification": 0.895, "regression": 0.853, "clustering": 0.821,
                     "dimensionality reduction": 0.800, "exploratory analysis": 0.833}
PUBLISHED_LEARNING = {"full": (0.767, 0.883), "no-history": (0.791, 0.802)}
PUBLISHED_HEALING = {"self-healing": 0.733, "retry-only": 0.233, "added_latency_seconds": 38}
#: How stages group into the published selection-accuracy rows.
STAGE_GROUPS = {
    "preprocessing": {Stage.LOADING, Stage.VALIDATION, Stage.DEDUPLICATION, Stage.TYPE_CONVERSION,
                      Stage.COLUMN_FILTERING, Stage.IMPUTATION, Stage.OUTLIER_HANDLING, Stage.SPLITTING},
    "feature engineering": {Stage.ENCODING, Stage.SCALING, Stage.FEATURE_SELECTION, Stage.FEATURE_ENGINEERING},
    "modelling": {Stage.MODELLING, Stage.CLUSTERING, Stage.DIMENSIONALITY_REDUCTION, Stage.ANOMALY_DETECTION},
    "evaluation": {Stage.EVALUATION, Stage.EXPLANATION, Stage.EDA, Stage.VISUALISATION, Stage.REPORTING},
}
TYPE_GROUPS = {"binary_classification": "classification", "multiclass_classification": "classification",
               "regression": "regression", "clustering": "clustering",
               "dimensionality_reduction": "dimensionality reduction", "anomaly_detection": "anomaly detection",
               "exploratory_analysis": "exploratory analysis"}


def _rate(results: list[TaskResult]) -> float | None:
    return rate_of([r.success for r in results])


#: Quality figures the report averages per configuration (normalised ones only where scales differ by task).
QUALITY_METRICS = ("roc_auc", "f1", "balanced_accuracy", "nrmse", "nmae", "r2", "adjusted_rand",
                   "normalized_mutual_info", "silhouette", "reconstruction_r2", "label_silhouette", "anomaly_roc_auc",
                   "anomaly_average_precision", "anomaly_precision", "anomaly_recall", "anomaly_fraction",
                   "statistics_match")


def configuration_summary(results: list[TaskResult]) -> dict[str, Any]:
    """Success, time to results (successful attempts) and quality (AUC, normalised RMSE, and the mean of every
    quality metric over the successful tasks that have it) of one experiment."""
    times = [r.seconds for r in results if r.success]
    return {
        "tasks": len(results), "successes": sum(r.success for r in results), "success_rate": _rate(results),
        "median_seconds": round(statistics.median(times), 2) if times else None,
        "p90_seconds": round(percentile(times, 0.9), 2) if times else None,
        "auc": mean([r.quality["roc_auc"] for r in results if r.success and "roc_auc" in r.quality]),
        "nrmse": mean([r.quality["nrmse"] for r in results if r.success and "nrmse" in r.quality]),
        "intent_accuracy": rate_of([r.intent_ok for r in results]),
        "quality": {metric: _quality_figure(results, metric) for metric in QUALITY_METRICS
                    if any(r.success and metric in r.quality for r in results)},
    }


def _quality_figure(results: list[TaskResult], metric: str) -> dict[str, Any]:
    """A metric's mean over the successful tasks that have it, beside the trivial predictor's on the same tasks."""
    scored = [r for r in results if r.success and metric in r.quality]
    baseline = BASELINE_OF.get(metric)
    trivial = [r.quality[baseline] for r in scored if baseline in r.quality]
    found = {"mean": mean([r.quality[metric] for r in scored]), "tasks": len(scored)}
    if baseline and len(trivial) == len(scored):
        found["trivial"] = mean(trivial)
    return found


def selection_accuracy(results: list[TaskResult]) -> dict[str, float | None]:
    """Share of reference stages where the chosen service is one the reference accepts, overall and by group."""
    by_group: dict[str, list[bool]] = defaultdict(list)
    for result in results:
        for stage, ok in result.selection.items():
            group = next(g for g, stages in STAGE_GROUPS.items() if Stage(stage) in stages)
            by_group[group].append(ok)
    flags = [ok for values in by_group.values() for ok in values]
    return {"overall": rate_of(flags), **{group: rate_of(by_group[group]) for group in STAGE_GROUPS}}


def success_by_type(results: list[TaskResult]) -> dict[str, float | None]:
    grouped: dict[str, list[TaskResult]] = defaultdict(list)
    for result in results:
        grouped[TYPE_GROUPS[result.task_type]].append(result)
    return {group: _rate(grouped[group]) for group in dict.fromkeys(TYPE_GROUPS.values()) if grouped[group]}


def learning_curve(results: list[TaskResult]) -> list[float | None]:
    return [_rate([r for r in results if r.cohort == cohort]) for cohort in range(COHORTS)]


def per_user(results: list[TaskResult]) -> dict[str, float | None]:
    users: dict[str, list[TaskResult]] = defaultdict(list)
    for result in results:
        users[result.user].append(result)
    return {user: _rate(rows) for user, rows in sorted(users.items())}


def cold_start(results: list[TaskResult]) -> dict[str, Any]:
    cold = [r for r in results if r.cold]
    warm = [r for r in results if not r.cold]
    gap = (None if not cold or not warm else round(_rate(warm) - _rate(cold), 4))
    return {"cold_tasks": len(cold), "cold_success": _rate(cold), "warm_tasks": len(warm),
            "warm_success": _rate(warm), "gap": gap, "good": gap is not None and abs(gap) <= 0.10}


def healing(healed: list[TaskResult], retried: list[TaskResult], baseline: list[TaskResult]) -> dict[str, Any]:
    """Recovery among runs whose injected fault made the step fail; added latency against the same tasks
    without a fault (the ``full`` experiment); net success over every run of the experiment."""
    def provoked(rows):
        return [r for r in rows if r.fault_provoked]

    clean = {r.task: r.seconds for r in baseline if r.success}
    added = [r.seconds - clean[r.task] for r in provoked(healed) if r.success and r.task in clean]
    return {
        "injected": sum(1 for r in healed if r.fault), "provoked": len(provoked(healed)),
        "recovered_self_healing": _rate(provoked(healed)), "recovered_retry_only": _rate(provoked(retried)),
        "median_added_seconds": round(statistics.median(added), 2) if added else None,
        "net_success_self_healing": _rate(healed), "net_success_retry_only": _rate(retried),
        "by_fault": {fault: {"self-healing": _rate([r for r in provoked(healed) if r.fault == fault]),
                             "retry-only": _rate([r for r in provoked(retried) if r.fault == fault])}
                     for fault in sorted({r.fault for r in healed if r.fault})},
    }


def degradation(results: dict[str, list[TaskResult]]) -> dict[str, dict[str, float | None]]:
    """Success by degradation level for code-grounded and documentation-based analysis, on the tasks the
    degraded experiments ran (level none comes from the ``full`` and ``documentation`` experiments)."""
    tasks = {r.task for name, rows in results.items() if name.startswith("degraded-") for r in rows}
    curves: dict[str, dict[str, float | None]] = {"code": {}, "documentation": {}}
    for analysis, undegraded in (("code", "full"), ("documentation", "documentation")):
        for level in Degradation:
            name = undegraded if level is Degradation.NONE else f"degraded-{level.value}/{analysis}"
            rows = [r for r in results.get(name, []) if r.task in tasks]
            curves[analysis][level.value] = _rate(rows)
    return curves


def summarise(results: dict[str, list[TaskResult]], peers: list[PeerResult],
              unavailable: dict[str, str] | None = None) -> dict[str, Any]:
    """The report's figures; ``unavailable`` names the peers that could not run in this run, with the reason."""
    full = results.get("full", [])
    summary: dict[str, Any] = {
        "generated": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "configurations": {name: configuration_summary(rows) for name, rows in results.items()
                           if name in CONFIGURATIONS},
        "published": PUBLISHED,
    }
    if full:
        summary.update({
            "selection_accuracy": selection_accuracy(full),
            "selection_accuracy_documentation": selection_accuracy(results.get("documentation", [])),
            "success_by_type": success_by_type(full), "cold_start": cold_start(full), "per_user": per_user(full),
            "learning_curve": {"full": learning_curve(full),
                               "no-history": learning_curve(results.get("no-history", []))},
        })
    if any(name.startswith("degraded-") for name in results):
        summary["degradation"] = degradation(results)
    if "faults/self-healing" in results:
        summary["self_healing"] = healing(results["faults/self-healing"], results.get("faults/retry-only", []), full)
    if peers:
        names = list(dict.fromkeys(p.peer for p in peers))
        summary["peers"] = {name: peers_summary(full, [p for p in peers if p.peer == name]) for name in names}
        summary["peer_tasks"] = peer_tasks(full, peers)
    if unavailable:
        summary["peers_unavailable"] = unavailable
    summary["success_rate"] = summary["configurations"].get("full", {}).get("success_rate")
    return summary


def _quality_cell(found: dict | None) -> str:
    if not found:
        return "–"
    trivial = f", trivial {found['trivial']:.3f}" if "trivial" in found else ""
    return f"{found['mean']:.3f} ({found['tasks']}{trivial})"


def markdown(summary: dict[str, Any]) -> str:
    """The report: each published table with our figures beside the published ones."""
    parts = [(f"# dagsmith bench\n\nGenerated {summary['generated']} on {summary['machine']['platform']} "
              f"({summary['machine']['cpus']} CPUs, Python {summary['machine']['python']}). Published figures: "
              "BENCHMARK.md (150 tasks, GPT-4 reasoner); ours: the deterministic reasoner.")]
    rows = []
    for name, ours in summary["configurations"].items():
        theirs = PUBLISHED.get(name, {})
        rows.append([name, f"{ours['successes']}/{ours['tasks']}", figure(ours["success_rate"]),
                     figure(theirs.get("success_rate")), figure(ours["median_seconds"], False),
                     figure(ours["p90_seconds"], False), (f"{theirs.get('median_seconds', '–')} / "
                     f"{theirs.get('p90_seconds', '–')}"),
                     f"{figure(ours['auc'], False)} / {figure(ours['nrmse'], False)}",
                     f"{theirs.get('auc', '–')} / {theirs.get('nrmse', '–')}"])
    parts.append("## Configurations\n\n" + table(
        ["configuration", "succeeded", "success", "published", "median s", "p90 s", "published median / p90 s",
         "AUC / nRMSE", "published AUC / nRMSE"], rows))
    configurations = summary["configurations"]
    metrics = [m for m in QUALITY_METRICS if any(m in c["quality"] for c in configurations.values())]
    if metrics:
        rows = [[metric] + [_quality_cell(c["quality"].get(metric)) for c in configurations.values()]
                for metric in metrics]
        parts.append("## Quality by metric (mean over the successful tasks that have it)\n\n"
                     + table(["metric", *configurations], rows))
    if "selection_accuracy" in summary:
        ours = summary["selection_accuracy"]
        rows = [[group, figure(ours.get(group)), figure(PUBLISHED_SELECTION.get(group))] for group in ours]
        rows.append(["documentation-based (overall)", figure(summary["selection_accuracy_documentation"]["overall"]),
                     figure(PUBLISHED_SELECTION["documentation"])])
        parts.append("## Component selection accuracy\n\n" + table(["stages", "ours", "published"], rows))
        rows = [[group, figure(rate), figure(PUBLISHED_BY_TYPE.get(group))]
                for group, rate in summary["success_by_type"].items()]
        parts.append("## Success by task type (full)\n\n" + table(["task type", "ours", "published"], rows))
        curve = summary["learning_curve"]
        rows = [[name] + [figure(v) for v in values] + [" → ".join(figure(v) for v in PUBLISHED_LEARNING[name])]
                for name, values in curve.items()]
        parts.append("## Learning curve (success per cohort, history accumulating)\n\n" + table(
            ["configuration"] + [f"cohort {i + 1}" for i in range(COHORTS)] + ["published first → last"], rows))
        cold = summary["cold_start"]
        parts.append(f"## Cold start\n\nTasks needing a never-executed microservice: {cold['cold_tasks']} "
                     f"({figure(cold['cold_success'])} success); the others: {cold['warm_tasks']} "
                     f"({figure(cold['warm_success'])}). Gap {figure(cold['gap'])} (good when within 10 points).\n\n"
                     "Per user (full): " + ", ".join(f"{u} {figure(v)}" for u, v in summary["per_user"].items()))
    if "degradation" in summary:
        rows = [[analysis] + [figure(curve.get(level.value)) for level in Degradation]
                for analysis, curve in summary["degradation"].items()]
        parts.append("## Documentation degradation (success)\n\n" + table(
            ["analysis"] + [level.value for level in Degradation], rows))
    if "self_healing" in summary:
        heal = summary["self_healing"]
        rows = [["self-healing", figure(heal["recovered_self_healing"]), figure(PUBLISHED_HEALING["self-healing"]),
                 figure(heal["net_success_self_healing"])],
                ["retry-only (3 retries)", figure(heal["recovered_retry_only"]),
                 figure(PUBLISHED_HEALING["retry-only"]), figure(heal["net_success_retry_only"])]]
        parts.append(f"## Self-healing (faults injected into {heal['injected']} runs, {heal['provoked']} made a step "
                     f"fail)\n\n" + table(["policy", "recovered", "published", "net success"], rows)
                     + f"\n\nMedian added latency when healed: {figure(heal['median_added_seconds'], False)} s "
                     f"(published {PUBLISHED_HEALING['added_latency_seconds']} s).")
    if "peers" in summary or "peers_unavailable" in summary:
        parts.append(peers_markdown(summary.get("peers", {}), summary.get("peer_tasks", []),
                                     summary.get("peers_unavailable", {})))
    return "\n\n".join(parts) + "\n"


def plots(summary: dict[str, Any], folder: Path) -> list[Path]:
    """PNG plots of the learning curve and the degradation curves (when those protocols ran)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    if "learning_curve" in summary:
        fig, ax = plt.subplots(figsize=(6, 4))
        for name, values in summary["learning_curve"].items():
            ax.plot(range(1, COHORTS + 1), [v if v is not None else float("nan") for v in values], marker="o",
                    label=f"ours, {name}")
            first, last = PUBLISHED_LEARNING[name]
            ax.plot([1, COHORTS], [first, last], linestyle="--", alpha=0.5, label=f"published, {name}")
        ax.set(xlabel="cohort", ylabel="success rate", ylim=(0, 1), title="Learning curve")
        ax.legend(fontsize=8)
        written.append(_save(fig, folder / "learning-curve.png"))
    if "degradation" in summary:
        fig, ax = plt.subplots(figsize=(6, 4))
        levels = [level.value for level in Degradation]
        for analysis, curve in summary["degradation"].items():
            ax.plot(levels, [curve.get(level) if curve.get(level) is not None else float("nan") for level in levels],
                    marker="o", label=f"{analysis}-based analysis")
        ax.set(xlabel="documentation degradation", ylabel="success rate", ylim=(0, 1), title="Degradation")
        ax.legend(fontsize=8)
        written.append(_save(fig, folder / "degradation.png"))
    return written


def _save(fig, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


def write_report(summary: dict[str, Any], folder: Path) -> dict[str, Path]:
    """report.md, report.json and the plots under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"markdown": folder / "report.md", "json": folder / "report.json"}
    paths["markdown"].write_text(markdown(summary), encoding="utf-8")
    paths["json"].write_text(json.dumps(summary, indent=2), encoding="utf-8")
    for plot in plots(summary, folder):
        paths[plot.stem] = plot
    return paths
