"""The benchmark's comparison with the AutoML peers: per peer, quality and time against ours on the tasks both
completed, task by task, and as Markdown."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from dagsmith.bench.peers import PeerResult
from dagsmith.bench.results import TaskResult
from dagsmith.bench.stats import figure, mean, rate_of, table


def _judging_metric(quality: dict[str, float]) -> str | None:
    return "roc_auc" if "roc_auc" in quality else "r2" if "r2" in quality else None


def peers_summary(ours: list[TaskResult], peers: list[PeerResult]) -> dict[str, Any]:
    """Quality and time ratios against one peer on the tasks both completed (ours / peer). A run of ours that
    modelled another column than the task's is no answer to compare: it is counted apart, not paired."""
    mine = {r.task: r for r in ours if r.success and r.intent_ok}
    pairs = [(mine[p.task], p) for p in peers if p.success and p.task in mine]
    auc = [(o.quality["roc_auc"], p.quality["roc_auc"]) for o, p in pairs
           if "roc_auc" in o.quality and "roc_auc" in p.quality]
    nrmse = [(o.quality["nrmse"], p.quality["nrmse"]) for o, p in pairs
             if "nrmse" in o.quality and "nrmse" in p.quality]
    # per task, ours minus the peer's on the metric that judges it (greater is better for both)
    differences = sorted(((o.task, metric, o.quality[metric] - p.quality[metric]) for o, p in pairs
                          if (metric := _judging_metric(o.quality)) and metric in p.quality), key=lambda d: d[2])
    return {
        "auc_difference": mean([d for _, m, d in differences if m == "roc_auc"]),
        "r2_difference": mean([d for _, m, d in differences if m == "r2"]),
        "worst": [{"task": task, "metric": metric, "difference": round(d, 4)} for task, metric, d in differences[:10]],
        "tasks": len(peers), "peer_success_rate": rate_of([p.success for p in peers]),
        "paired": len(pairs), "other_target": sum(r.success and not r.intent_ok for r in ours),
        "our_auc": mean([a for a, _ in auc]), "peer_auc": mean([b for _, b in auc]),
        "auc_ratio": mean([a / b for a, b in auc if b]),
        "our_nrmse": mean([a for a, _ in nrmse]), "peer_nrmse": mean([b for _, b in nrmse]),
        "nrmse_ratio": mean([a / b for a, b in nrmse if b]),
        "time_ratio": mean([o.seconds / p.seconds for o, p in pairs if p.seconds]),
    }


def peer_tasks(ours: list[TaskResult], peers: list[PeerResult]) -> list[dict[str, Any]]:
    """Per supervised task of ours, the judging metric and time for us and for every peer that ran it."""
    by_peer: dict[str, dict[str, PeerResult]] = defaultdict(dict)
    for result in peers:
        by_peer[result.peer][result.task] = result
    rows = []
    for result in sorted(ours, key=lambda r: (r.task_type, r.task)):
        ran = {name: tasks[result.task] for name, tasks in by_peer.items() if result.task in tasks}
        if not ran:
            continue
        metric = "roc_auc" if result.task_type.classification else "r2"
        rows.append({"task": result.task, "metric": metric, "seconds": result.seconds,
                     "ours": result.quality.get(metric) if result.success and result.intent_ok else None,
                     "peers": {name: {"value": peer.quality.get(metric) if peer.success else None,
                                      "seconds": peer.seconds} for name, peer in ran.items()}})
    return rows


def peers_markdown(peers: dict[str, dict], tasks: list[dict], unavailable: dict[str, str]) -> str:
    """The peers side by side (one column each), then task by task, then what kept a peer from running."""
    names = list(peers)
    rows = [["tasks completed by both"] + [str(p["paired"]) for p in peers.values()],
            ["peer succeeded on"] + [f"{figure(p['peer_success_rate'])} of {p['tasks']}" for p in peers.values()],
            ["AUC ours / peer (classification)"] + [f"{figure(p['our_auc'], False)} / {figure(p['peer_auc'], False)}"
                                                     for p in peers.values()],
            ["mean AUC difference (ours − peer)"] + [figure(p.get("auc_difference"), False) for p in peers.values()],
            ["nRMSE ours / peer (regression, lower is better)"] + [
                f"{figure(p['our_nrmse'], False)} / {figure(p['peer_nrmse'], False)}" for p in peers.values()],
            ["mean R² difference (ours − peer)"] + [figure(p.get("r2_difference"), False) for p in peers.values()],
            ["time ratio (ours / peer)"] + [figure(p["time_ratio"], False) for p in peers.values()]]
    text = "## Against the AutoML peers (same tasks, same split, same time budget)\n\n" + table(
        ["figure", *names], rows)
    other = max((p.get("other_target", 0) for p in peers.values()), default=0)
    if other:
        text += f"\n\n{other} runs of ours that modelled another column than the task's are left out."
    for name, peer in peers.items():
        shortfalls = ", ".join(f"{w['task']} {w['difference']:+.3f} {w['metric']}" for w in peer.get("worst", [])
                               if w["difference"] < 0)
        text += f"\n\nLargest shortfalls against {name}: {shortfalls or 'none'}."
    if tasks:
        def cell(value: float | None) -> str:
            return "–" if value is None else f"{value:.3f}"

        rows = [[t["task"], t["metric"], cell(t["ours"])]
                + [cell(t["peers"][n]["value"]) if n in t["peers"] else "–" for n in names]
                + [f"{t['seconds']:.0f}"] + [f"{t['peers'][n]['seconds']:.0f}" if n in t["peers"] else "–"
                                              for n in names] for t in tasks]
        text += "\n\n" + table(["task", "metric", "ours", *names, "ours s", *(f"{n} s" for n in names)], rows)
    for name, reason in unavailable.items():
        text += f"\n\n{name} not run: {reason}"
    return text
