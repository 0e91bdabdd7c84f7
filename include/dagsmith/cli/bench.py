"""``dagsmith bench``: the published evaluation run on the product itself, with the published figures beside ours."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markdown import Markdown
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from dagsmith.cli.output import console, errors, fail, print_json
from dagsmith.cli.run import require_runtime
from dagsmith.config import Settings

GROUPS = ("configurations", "degradation", "faults", "all")


def _experiments(names: list[str]):
    from dagsmith.bench.experiments import CONFIGURATIONS, DEGRADATION, EXPERIMENTS, FAULTS

    groups = {"configurations": CONFIGURATIONS, "degradation": DEGRADATION, "faults": FAULTS, "all": EXPERIMENTS}
    chosen = {}
    for name in names:
        if name in groups:
            chosen.update(groups[name])
        elif name in EXPERIMENTS:
            chosen[name] = EXPERIMENTS[name]
        else:
            fail(f"unknown configuration '{name}'; use one of {', '.join([*GROUPS, *EXPERIMENTS])}", code=2)
    return list(chosen.values())


def _peers(names: list[str] | None) -> list[str]:
    from dagsmith.bench.peers import PEERS

    unknown = [name for name in names or [] if name not in PEERS]
    if unknown:
        fail(f"unknown peer(s): {', '.join(unknown)}; use {' or '.join(PEERS)}", code=2)
    return [name for name in PEERS if not names or name in names]


def _select(tasks, ids: list[str] | None, limit: int | None):
    if ids:
        known = {task.id: task for task in tasks}
        unknown = [i for i in ids if i not in known]
        if unknown:
            fail(f"unknown task(s): {', '.join(unknown)}; see dagsmith bench --list", code=2)
        tasks = [known[i] for i in ids]
    return tasks[:limit] if limit else tasks


def bench_command(
    list_tasks: Annotated[bool, typer.Option("--list", help="List the suite's tasks and exit.")] = False,
    tasks: Annotated[list[str] | None, typer.Option("--tasks", help="Task ids to run (repeatable).")] = None,
    limit: Annotated[int | None, typer.Option(help="Run only the first N tasks of the suite.", min=1)] = None,
    config: Annotated[list[str], typer.Option(
        "--config", help="Configuration(s) or group(s): full, no-history, documentation, semantic-only, manual, "
                         "configurations, degradation, faults, all.")] = ["all"],  # noqa: B006 - typer reads it
    peers: Annotated[bool, typer.Option(help="Also run the supervised tasks through the AutoML peers.")] = True,
    peer: Annotated[list[str] | None, typer.Option(
        "--peer", help="Peer(s) to run: flaml, autogluon (repeatable) [default: both].")] = None,
    workers: Annotated[int, typer.Option(help="Tasks attempted at once.", min=1)] = 1,
    runtime: Annotated[str, typer.Option(help="Where steps run: local or docker.")] = "local",
    out: Annotated[Path | None, typer.Option(help="Folder for data, results and the report "
                                                   "[default: DAGSMITH_HOME/bench].")] = None,
    fresh: Annotated[bool, typer.Option(help="Forget earlier results of the chosen configurations.")] = False,
    report_only: Annotated[bool, typer.Option("--report-only", help="Rebuild the report from saved results.")] = False,
    suite: Annotated[Path | None, typer.Option(help="A suite file instead of the packaged one.")] = None,
    json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Run the evaluation of BENCHMARK.md on this product and report it beside the published figures.

    Results are saved per task as they finish, so an interrupted run resumes where it stopped.
    """
    from dagsmith.bench.suite import load_suite

    try:
        whole = load_suite(suite)
    except (OSError, ValueError) as exc:
        fail(f"cannot read the task suite: {exc}", code=2)
    suite_tasks = _select(whole, tasks, limit)
    chosen_peers = _peers(peer) if peers else []
    if list_tasks:
        _print_tasks(suite_tasks, json)
        return
    require_runtime(runtime)
    settings = Settings.from_env()
    out = (out or settings.home / "bench").resolve()
    unavailable = {}
    if not report_only:
        unavailable = _run(whole, {t.id for t in suite_tasks}, _experiments(config), out, settings, runtime, workers,
                           chosen_peers, fresh, quiet=json)
    from dagsmith.bench.report import summarise, write_report
    from dagsmith.bench.results import load_peers, load_results

    chosen = {task.id for task in suite_tasks}
    results = {name: [r for r in rows if r.task in chosen] for name, rows in load_results(out).items()}
    peer_rows = [p for p in load_peers(out) if p.task in chosen]
    summary = summarise({k: v for k, v in results.items() if v}, peer_rows, unavailable)
    paths = write_report(summary, out / "report")
    if json:
        print_json(summary)
        return
    console.print(Markdown((out / "report" / "report.md").read_text(encoding="utf-8")))
    console.print(f"\nreport: {paths['markdown']} (JSON: {paths['json']})")


def _print_tasks(tasks, as_json: bool) -> None:
    if as_json:
        print_json([task.model_dump(mode="json") for task in tasks])
        return
    for task in tasks:
        rows = f"{task.rows} rows of " if task.rows else ""
        console.print(f"[bold]{task.id}[/]  {task.task_type.value}  ({rows}{task.dataset})  [dim]{task.goal}[/]",
                      highlight=False)
    console.print(f"\n{len(tasks)} tasks")


def _run(suite, chosen: set[str], experiments, out: Path, settings: Settings, runtime: str, workers: int,
         peers: list[str], fresh: bool, quiet: bool) -> dict[str, str]:
    """Run the experiments, then the peers on the ``full`` experiment's supervised tasks; the peers that could not
    run here, each with the reason."""
    from dagsmith.bench.peers import PeerUnavailable
    from dagsmith.bench.runner import Bench, run_experiment, run_peers, schedule
    from dagsmith.embeddings import default_embedder

    bench = Bench(out=out, catalog=Path.cwd() / "microservices", settings=settings, embedder=default_embedder(),
                  runtime=runtime)
    if not bench.catalog.is_dir():
        fail(f"no microservices folder at {bench.catalog}; run dagsmith bench from the repository root", code=2)
    scheduled = schedule(suite, chosen)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("[dim]{task.fields[last]}"))
    unavailable: dict[str, str] = {}
    with Progress(*columns, console=console, disable=quiet) as bar:
        for experiment in experiments:
            if fresh:
                bench.forget(experiment)
            done = len(bench.results(experiment).load().keys() & chosen)
            progress_id = bar.add_task(experiment.name, total=len(chosen), completed=done, last="")

            def advance(result, progress_id=progress_id):
                mark = "✓" if result.success else "✗"
                bar.update(progress_id, advance=1, last=f"{mark} {result.task} {result.seconds:.0f}s")

            results = run_experiment(experiment, scheduled, bench, workers=workers, on_result=advance)
            if experiment.name != "full":
                continue
            supervised = [r for r in results if r.task in chosen and r.task_type.supervised]
            for name in peers:
                peer_id = bar.add_task(f"peer {name}", total=len(supervised), last="")
                try:
                    run_peers(bench.peer(name), [r for r in results if r.task in chosen], {t.id: t for t in suite},
                              bench, on_result=lambda p, peer_id=peer_id: bar.update(
                                  peer_id, advance=1, last=f"{p.task} {p.seconds:.0f}s"))
                except PeerUnavailable as exc:
                    unavailable[name] = str(exc)
                    errors.print(f"{name} not run: {exc}", highlight=False, soft_wrap=True)
                    bar.remove_task(peer_id)
    return unavailable
