"""The answer to the goal, written when a run finishes: what was predicted or found and how good it is, read from the
run's own outputs, then every plot the run made, how the pipeline was chosen and what each step reported.

The summary paragraph is what ``dagsmith run``, the run page and the report open with; ``answer.md`` at the root of
the run's workspace is the whole report.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from dagsmith.execution.history import artifact_paths
from dagsmith.models.catalog import Stage, TaskType
from dagsmith.store import schema
from dagsmith_kit import Bundle, BundleError
from dagsmith_kit.explanation import read_explanation
from dagsmith_kit.exploration import read_exploration
from dagsmith_kit.insight import readable_number
from dagsmith_kit.metrics import label as metric_label
from dagsmith_kit.unsupervised import describe_clusters

logger = logging.getLogger(__name__)

if TYPE_CHECKING:  # scikit-learn's metrics: loaded only where a supervised model is assessed
    from dagsmith.execution.quality import Quality

ANSWER_FILE = "answer.md"
#: drivers, anomalous rows and cluster traits named in the summary paragraph (the report lists them all).
NAMED = 3
#: metrics named in the summary, most telling first.
HEADLINE_METRICS = ("roc_auc", "f1", "accuracy", "r2", "nrmse", "rmse")


@dataclass(frozen=True)
class StepOutcome:
    """One step of the finished run as the answer reads it: its stage, the service that ran, and its output."""

    position: int
    stage: Stage
    service: str
    output: Path
    depends_on: list[int] = field(default_factory=list)

    def bundle(self) -> Bundle | None:
        try:
            return Bundle.open(self.output)
        except BundleError:
            return None


def summarise(task: TaskType, target: str | None, steps: list[StepOutcome], quality: Quality | None,
              error: str | None) -> str:
    """One paragraph that answers the goal, or says why the run gives no answer."""
    if error:
        return f"No answer: {error}"
    by_stage = {step.stage: step for step in steps}
    doubted = f"Needs review: {quality.review} " if quality is not None and quality.review else ""
    if task.supervised and Stage.MODELLING in by_stage:
        return doubted + _supervised(task, target, by_stage, quality)
    if Stage.CLUSTERING in by_stage and (bundle := by_stage[Stage.CLUSTERING].bundle()) is not None:
        return doubted + _clusters(bundle, steps)
    if Stage.ANOMALY_DETECTION in by_stage and (bundle := by_stage[Stage.ANOMALY_DETECTION].bundle()) is not None:
        loaded = by_stage[Stage.LOADING].bundle() if Stage.LOADING in by_stage else None
        return _anomalies(bundle, len(loaded.table("data")) if loaded and "data" in loaded.table_names() else None)
    if Stage.DIMENSIONALITY_REDUCTION in by_stage and (
            bundle := by_stage[Stage.DIMENSIONALITY_REDUCTION].bundle()) is not None:
        return _components(bundle, steps)
    explored = next((found for step in steps if (found := read_exploration(step.output))), None)
    if explored:
        return _exploration(explored)
    rows = next((len(b.table(n)) for s in steps if (b := s.bundle()) for n in b.table_names()[:1]), None)
    return (f"Explored the table{f' ({rows:,} rows)' if rows else ''}: the report below holds every statistic, "
            "distribution and plot the pipeline made.")


def _exploration(found: dict) -> str:
    """The headline of each analysis an exploration ran: what goes with the focus first, as that was the question."""
    parts = []
    if found.get("associations"):
        copies = [a["column"] for a in found["associations"] if a.get("same")]
        others = [a for a in found["associations"] if not a.get("same")]
        aside = f" ({', '.join(copies)}, {found['focus']} itself in other units or names, left aside)" if copies else ""
        parts.append(f"What goes most with {found['focus']}{aside}: " + "; ".join(
            f"{a['column']} ({a['measure']} {a['strength']:.2f}" + (f", {a['direction']})" if a["direction"] else ")")
            for a in others[:NAMED]) if others else f"Nothing but copies goes with {found['focus']}{aside}")
    elif found.get("focus") and "associations" in found:
        parts.append(f"No column could be compared with {found['focus']}")
    if found.get("correlations"):
        parts.append("strongest correlations: " + ", ".join(
            f"{p['a']} and {p['b']} ({p['value']:+.2f})" for p in found["correlations"][:NAMED]))
    if "outliers" in found:
        outliers = found["outliers"]
        parts.append("outliers in " + ", ".join(f"{c['column']} ({c['count']:,}, {c['share']:.1%})"
                                                for c in outliers[:NAMED]) if outliers
                     else "no column has values outside its usual range")
    if found.get("missingness", {}).get("columns"):
        gaps = found["missingness"]["columns"]
        parts.append(f"gaps in {len(gaps)} columns, most in " + ", ".join(
            f"{c} ({share:.0%})" for c, share in list(gaps.items())[:NAMED]))
    skewed = [c for c, shape in found.get("distributions", {}).items() if "skewed" in shape]
    if skewed:
        parts.append(f"skewed: {', '.join(skewed[:NAMED + 2])}")
    body = "; ".join(parts)
    return f"Explored {found['rows']:,} rows and {found['columns']} columns" + (
        f". {body[0].upper()}{body[1:]}" if body else "") + "."


def _supervised(task: TaskType, target: str | None, by_stage: dict[Stage, StepOutcome], quality: Quality | None) -> str:
    model = by_stage[Stage.MODELLING]
    bundle = model.bundle()
    rows = len(bundle.table("test")) if bundle is not None and "test" in bundle.table_names() else None
    kind = task.value.replace("_", " ")
    ahead = bundle.meta.get("horizon") if bundle is not None and bundle.forecasts else None
    text = (f"Forecasts {target} {ahead} ahead" if ahead else f"Predicts {target} ({kind})") + f" with {model.service}"
    if quality is not None:
        shown = sorted(quality.beside_baselines(), key=lambda r: HEADLINE_METRICS.index(r["metric"])
                       if r["metric"] in HEADLINE_METRICS else len(HEADLINE_METRICS))[:2]
        scores = (" and ".join(f"{metric_label(r['metric'])} {r['value']:.3f}" for r in shown) + ", against "
                  + " and ".join(f"{r['baseline']:.3f}" for r in shown)
                  + f" for {quality.baseline or 'a trivial predictor'}")
        text += f". On {rows:,} held-out rows: {scores}" if rows else f": {scores}"
    explained = by_stage.get(Stage.EXPLANATION)
    drivers = (read_explanation(explained.output) or {}).get("drivers", []) if explained else []
    if drivers:
        text += ". What drives the predictions most: " + "; ".join(
            d["feature"] + (f" ({d['direction']})" if d.get("direction") else "") for d in drivers[:NAMED])
    return text + "."



def _anomalies(bundle: Bundle, loaded: int | None) -> str:
    """The share flagged and the most unusual rows with why: by the table's id, else by their number counted from 1
    (which is the row of the file the data was loaded from unless a step before dropped rows, which is then said)."""
    predictions = bundle.predictions()
    flagged = predictions[predictions["is_anomaly"].astype(bool)]
    if "anomaly_rank" in flagged.columns:
        flagged = flagged.sort_values("anomaly_rank")
    text = (f"Flagged {len(flagged):,} of {len(predictions):,} rows ({len(flagged) / max(len(predictions), 1):.1%}) "
            "as unusual")
    data = bundle.table("data")
    ids = [c for c in bundle.id_columns if c in data.columns]
    why = flagged["why"] if "why" in flagged.columns else pd.Series("", index=flagged.index)
    named = [(f"{ids[0]} {data.at[row, ids[0]]}" if ids else f"row {row + 1:,}")
             + (f" ({why[row]})" if why[row] else "") for row in flagged.index[:NAMED]]
    renumbered = not ids and loaded is not None and loaded != len(data)
    counted = f" (rows numbered among the {len(data):,} left of the {loaded:,} loaded)" if renumbered else ""
    return text + (f". The most unusual{counted}: " + "; ".join(named) if named else "") + "."


def _clusters(bundle: Bundle, steps: list[StepOutcome]) -> str:
    """The groups and what sets each apart, in the table's own units (whether they separate at all is the run's
    review, ``quality.clustering_quality``)."""
    labels = bundle.predictions()["cluster"].to_numpy()
    data = bundle.table("data")
    columns = bundle.feature_columns(data, numeric=True)
    metrics = bundle.metrics()
    found = len(set(labels.tolist()) - {-1})
    quality = f" (silhouette {metrics['silhouette']:.2f})" if "silhouette" in metrics else ""
    described = describe_clusters(_in_own_units(data, columns, steps), columns, labels, top=2)
    return f"Found {found} groups{quality}: " + "; ".join(described[:6]) + "."


def _in_own_units(data: pd.DataFrame, columns: list[str], steps: list[StepOutcome]) -> pd.DataFrame:
    """``data``'s ``columns`` as the earliest of ``steps`` that holds each wrote them, on the same rows: the table's
    own values before any scaling (an encoded category as its 0/1 share), so a cluster reads "age 52 against 38",
    not in standard deviations. ``steps`` include the one that wrote ``data``, so every column is found."""
    found = pd.DataFrame(index=data.index)
    for step in sorted(steps, key=lambda s: s.position):
        missing = [c for c in columns if c not in found.columns]
        bundle = step.bundle() if missing else None
        if bundle is None or "data" not in bundle.table_names():
            continue
        table = bundle.table("data")
        if table.index.equals(data.index):
            for column in missing:
                if column in table.columns and pd.api.types.is_numeric_dtype(table[column]):
                    found[column] = table[column]
    return found[columns]


def _components(bundle: Bundle, steps: list[StepOutcome]) -> str:
    """How many components keep how much, and what each moves with: the features, as loaded, most correlated with it
    on the same rows (any reduction's components, whatever its own report says)."""
    metrics = bundle.metrics()
    text = (f"Reduced {readable_number(metrics.get('n_input_features', 0))} numeric features to "
            f"{readable_number(metrics.get('n_components', 0))} components")
    if "explained_variance_ratio" in metrics:
        text += f" that keep {metrics['explained_variance_ratio']:.1%} of the variance"
    data = bundle.table("data")
    components = [c for c in data.columns if c.startswith("component_")][:NAMED]
    loaded = steps[0].bundle()
    table = loaded.table("data") if loaded is not None and "data" in loaded.table_names() else None
    # rows left out on the way leave no row-by-row correlation to read
    if not components or loaded is None or table is None or not table.index.equals(data.index):
        return text + "; the report below says what loads on each."
    features = [c for c in loaded.feature_columns(table, numeric=True) if table[c].nunique() > 1]
    moves = []
    for name in components:
        r = table[features].corrwith(data[name]).dropna()
        top = r.abs().sort_values(ascending=False).index[:NAMED]
        share = metrics.get(f"explained_variance_ratio_{name.removeprefix('component_')}")
        moves.append(f"{name}{f' ({share:.0%})' if share else ''} moves with "
                     + ", ".join(f"{c} ({r[c]:+.2f})" for c in top))
    return f"{text}: " + "; ".join(moves) + " (correlations on the same rows)."


def write_answer(workspace: Path, goal: str, summary: str, steps: list[StepOutcome], chosen: str) -> Path:
    """``answer.md``: the goal and its answer, every plot, how the pipeline was chosen (``chosen``, Markdown) and
    what each step added to the report (its plots shown once, above), so the shared start of parallel branches
    appears once."""
    plots = artifact_paths(workspace)
    reports = {step.position: _report(step.output) for step in steps}
    sections = []
    for step in steps:
        before = max((reports.get(p, "") for p in step.depends_on), key=len, default="")
        own = reports[step.position]
        added = own[len(before):] if own.startswith(before) else own
        if added.strip():
            text = _demote("\n".join(line for line in added.strip().splitlines() if not line.startswith("![")))
            sections.append(f"### {step.position}. {step.stage}: {step.service}\n\n{text}")
    lines = [f"# {goal}", "", summary, "", "## Plots", ""]
    lines += [f"![{plot.stem}]({plot.relative_to(workspace).as_posix()})" for plot in plots] or ["No plots."]
    lines += ["", "## How the pipeline was chosen", "", chosen, "", "## What each step reported", "", *sections]
    path = workspace / ANSWER_FILE
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def add_to_answer(execution: schema.Execution, text: str) -> None:
    """``text`` at the end of the run's answer, in its trace and in the summary of ``answer.md``, for what is decided
    once the answer is written (how long the run took, the model version it made), so the document opens with the
    run's whole answer. A disk that does not take it loses the line from the file, not from the trace."""
    execution.trace = {**execution.trace, "answer": f"{execution.trace.get('answer', '')} {text}".strip()}
    if not execution.workspace:
        return
    path = Path(execution.workspace) / ANSWER_FILE
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
        lines[2] = f"{lines[2]} {text}"  # after the goal and a blank line, the summary
        path.write_text("\n".join(lines), encoding="utf-8")
    except OSError as exc:
        logger.warning("could not add to the report of execution %s: %s", execution.id, exc)


def _report(folder: Path) -> str:
    file = folder / "report.md"
    return file.read_text(encoding="utf-8") if file.is_file() else ""


def _demote(markdown: str) -> str:
    """Step headings below the answer's own, so the report keeps one title."""
    return "\n".join("##" + line if line.startswith("#") else line for line in markdown.splitlines())
