"""``dagsmith predict``: score new rows with a version of a pipeline's model (its champion unless told)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from dagsmith.cli.output import JsonOption, console, print_json
from dagsmith.cli.run import require_reachable
from dagsmith.config import Settings


def predict_command(
    pipeline_id: Annotated[int, typer.Argument(help="Pipeline id (see `dagsmith pipelines list`).")],
    data: Annotated[Path, typer.Argument(help="The rows to score: CSV, TSV, Parquet, JSON or Excel, with the columns "
                                              "the pipeline was trained on.")],
    out: Annotated[Path | None, typer.Option("--out", help="Where to write the predictions: .csv or .parquet "
                                                           "(default: NAME.predictions.csv beside the input).")]
    = None,
    version: Annotated[int | None, typer.Option("--version", help="The version to score with (default: the "
                                                                  "champion; see `dagsmith models list`).")] = None,
    runtime: Annotated[str, typer.Option(help="Where the scoring step runs: local (sandbox) or docker.")] = "local",
    user: Annotated[str | None, typer.Option(help="Who scores (default: the pipeline's owner).")] = None,
    json: JsonOption = False,
) -> None:
    """Score new rows in a sandboxed step: predictions with the rows' ids, notes on their columns, and drift per
    feature against the training rows."""
    from dagsmith.registry.predict import predict  # the data stack, loaded only to score

    require_reachable(runtime)
    settings = Settings.from_env()
    summary = predict(pipeline_id, data, out=out, number=version, runtime=runtime, user=user, settings=settings)
    if json:
        print_json(summary)
        return
    console.print(f"scored {summary['rows']:,} rows with version {summary['version']} ({summary['status']}) of "
                  f"pipeline {pipeline_id}: {escape(summary['output'])}", highlight=False)
    if summary["extra_columns"]:
        console.print(f"  extra columns ignored: {escape(', '.join(summary['extra_columns']))}", highlight=False)
    for title, counts in (("unseen categories", summary["unseen_categories"]),
                          ("values outside the training range", summary["out_of_range"])):
        if counts:
            console.print(f"  {title}: " + escape(", ".join(f"{c} ({n:,} rows)" for c, n in counts.items())),
                          highlight=False)
    if summary["drifted"]:
        console.print(f"[bold red]  DRIFT: {len(summary['drifted'])} feature(s) moved away from the training rows "
                      f"(PSI at or above {summary['drift_threshold']:g}):[/] "
                      + escape(", ".join(f"{c} {psi:.2f}" for c, psi in summary["drifted"].items())), highlight=False)
    else:
        console.print(f"  no drift: every feature's PSI is below {summary['drift_threshold']:g}", highlight=False)
