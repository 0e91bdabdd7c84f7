"""Append a final summary section to report.md: the task and target, the pipeline steps from the lineage
with their parameters, a table of the metrics and links to every plot in artifacts/. Markdown only.
"""

import json

from dagsmith_kit import run_service
from dagsmith_kit.insight import markdown_table


def write_report(inp, out, params):
    title = params.get("title", "Pipeline report")
    max_metrics = int(params.get("max_metrics", 60))
    meta = inp.meta
    lines = [f"# {title}", "",
             f"- task: {meta.get('task_type') or 'unknown'}",
             f"- target: {meta.get('target') or 'none'}",
             f"- dataset: {meta.get('source_name') or 'unknown'}",
             f"- tables: {', '.join(f'{name} ({len(inp.table(name))} rows)' for name in inp.table_names()) or 'none'}"]
    steps = meta.get("lineage") or []
    lines += ["", "## Pipeline steps", ""]
    lines += [f"{i}. `{step.get('service')}` {json.dumps(step.get('params') or {})} ({step.get('seconds', 0)} s)"
              for i, step in enumerate(steps, 1)] or ["No steps recorded."]
    metrics = inp.metrics()
    lines += ["", "## Metrics", ""]
    if metrics:
        shown = list(metrics.items())[:max_metrics]
        lines.append(markdown_table(["metric", "value"], [[k, v] for k, v in shown]))
        if len(metrics) > len(shown):
            lines.append(f"\n{len(metrics) - len(shown)} more metrics in metrics.json.")
    else:
        lines.append("No metrics recorded.")
    plots = sorted((inp.path / "artifacts").glob("*.png")) if (inp.path / "artifacts").is_dir() else []
    lines += ["", "## Plots", ""]
    lines += [f"![{plot.stem}](artifacts/{plot.name})" for plot in plots] or ["No plots."]
    out.append_report("\n".join(lines))


if __name__ == "__main__":
    run_service(write_report)
