"""``dagsmith catalog``: upload, index, search and inspect microservices."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from dagsmith.catalog import repository
from dagsmith.catalog.search import search as search_catalog
from dagsmith.catalog.upload import add as add_service
from dagsmith.catalog.upload import reanalyze as reanalyze_catalog
from dagsmith.catalog.upload import sync as sync_folder
from dagsmith.cli.output import JsonOption, console, fail, print_json, print_rows, progress
from dagsmith.models.catalog import Analysis, AnalysisMode, UploadOutcome, UploadResult
from dagsmith.store.db import session_scope

app = typer.Typer(help="Upload, index, search and inspect the microservice catalog.", no_args_is_help=True)
_STYLE = {"added": "green", "updated": "cyan", "unchanged": "dim", "rejected": "bold red"}


def _print_result(result: UploadResult) -> None:
    style = _STYLE[result.outcome.value]
    console.print(f"[{style}]{result.outcome.value:>9}[/] {result.name}", highlight=False)
    for finding in result.findings:
        if result.outcome is UploadOutcome.REJECTED or not finding.blocking:
            marker = "[red]✗[/]" if finding.blocking else "[yellow]![/]"
            console.print(f"           {marker} {escape(str(finding))}", highlight=False)
    if result.analysis and result.outcome is not UploadOutcome.REJECTED:
        console.print(f"           [dim]{result.analysis.summary}[/]", highlight=False)


@app.command()
def add(
    path: Annotated[Path, typer.Argument(help="Folder holding manifest.yaml, main.py and requirements.txt.")],
    json: JsonOption = False,
) -> None:
    """Upload one microservice: validate, scan, analyse its code, embed and store it.

    A rejected upload prints every reason, stores nothing and exits with code 1.
    """
    result = add_service(path)
    print_json(result) if json else _print_result(result)
    if result.outcome is UploadOutcome.REJECTED:
        raise typer.Exit(1)


@app.command()
def sync(
    directory: Annotated[Path, typer.Argument(help="Folder of microservice folders.")] = Path("microservices"),
    json: JsonOption = False,
) -> None:
    """Index every microservice under DIRECTORY; only new or changed code is analysed again."""
    if not directory.is_dir():
        fail(f"{directory} is not a folder: name the folder whose subfolders each hold a microservice (manifest.yaml, "
             "main.py, requirements.txt), such as `microservices/` in dagsmith's repository")
    results = sync_folder(directory, progress=None if json else progress)
    if json:
        print_json(results)
    else:
        _print_changes(results)
    if any(r.outcome is UploadOutcome.REJECTED for r in results):
        raise typer.Exit(1)


def _print_changes(results: list[UploadResult]) -> None:
    """Every service that changed, then how many of each outcome."""
    for result in results:
        if result.outcome is not UploadOutcome.UNCHANGED:
            _print_result(result)
    counts = {o.value: sum(r.outcome is o for r in results) for o in UploadOutcome}
    console.print(", ".join(f"{n} {k}" for k, n in counts.items()), highlight=False)


@app.command()
def reanalyze(
    everything: Annotated[bool, typer.Option("--all", help="Also those the current analyzer analysed.")] = False,
    json: JsonOption = False,
) -> None:
    """Analyse the stored microservices again with the configured analyzer, e.g. after DAGSMITH_LLM_MODEL changed.

    Only services whose newest code analysis came from another analyzer (or model) are analysed, unless --all.
    """
    results = reanalyze_catalog(progress=None if json else progress, everything=everything)
    if json:
        print_json(results)
    else:
        _print_changes(results)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What the microservice should do, in plain language.")],
    k: Annotated[int, typer.Option("--k", "-k", min=1, max=100, help="How many results.")] = 5,
    mode: Annotated[AnalysisMode,
                    typer.Option(help="Search code-grounded or documentation-based analyses.")] = AnalysisMode.CODE,
    json: JsonOption = False,
) -> None:
    """Find microservices by meaning (cosine similarity over pgvector)."""
    try:
        hits = search_catalog(query, k=k, mode=mode)
    except ValueError as exc:
        fail(str(exc), code=2)
    if json:
        print_json(hits)
        return
    if not hits:
        fail(repository.EMPTY_CATALOG)
    table = Table("score", "microservice", "stage", "what the code does", box=None)
    for hit in hits:
        table.add_row(f"{hit.score:.3f}", hit.name, hit.stages[0] if hit.stages else "", hit.summary)
    console.print(table)


def _print_analysis(title: str, analysis: Analysis | None) -> None:
    if analysis is None:
        return
    console.print(f"\n[bold]{title}[/] [dim]({analysis.analyzer} {analysis.analyzer_version}, "
                  f"{analysis.analyzed_at:%Y-%m-%d %H:%M} UTC)[/]", highlight=False)
    console.print(analysis.summary, highlight=False)
    rows = [
        ("stages", ", ".join(analysis.stages)), ("tasks", ", ".join(analysis.task_types) or "any"),
        ("capabilities", "; ".join(analysis.capabilities)), ("needs", "; ".join(analysis.requirements_on_input)),
        ("reads", ", ".join(analysis.inputs)), ("writes", ", ".join(analysis.outputs)),
        ("algorithms", ", ".join(analysis.algorithms)), ("use cases", "; ".join(analysis.use_cases)),
        ("security notes", "; ".join(analysis.security_notes)),
    ]
    for label, value in rows:
        if value:
            console.print(f"  [cyan]{label:>14}[/] {value}", highlight=False)
    if analysis.parameters:
        table = Table("parameter", "type", "default", "used as", box=None, padding=(0, 2))
        for p in analysis.parameters:
            table.add_row(p.name, p.type, "required" if p.required else repr(p.default), p.description)
        console.print(table)


@app.command()
def show(
    name: Annotated[str, typer.Argument(help="Microservice name.")],
    json: JsonOption = False,
) -> None:
    """Everything the catalog knows about one microservice: both description layers, parameters, I/O."""
    with session_scope() as session:
        detail = repository.detail(session, name)
        known = [] if detail else repository.names(session)
    if detail is None:
        close = [n for n in known if name.lower() in n or n in name.lower()][:5]
        fail(f"no microservice named '{name}'" + (f"; did you mean {', '.join(close)}?" if close else ""))
    if json:
        print_json(detail)
        return
    console.print(f"[bold]{detail.name}[/] [dim]{detail.category}, version {detail.version_hash[:12]}, "
                  f"uploaded {detail.uploaded_at:%Y-%m-%d %H:%M} from {detail.origin}[/]", highlight=False)
    console.print("\n[bold]What the uploader says[/] [dim](manifest)[/]")
    console.print(detail.manifest.description or "[dim](no description)[/]", highlight=False)
    if detail.manifest.keywords:
        console.print(f"  [cyan]{'keywords':>14}[/] {', '.join(detail.manifest.keywords)}", highlight=False)
    if detail.manifest.author:
        console.print(f"  [cyan]{'author':>14}[/] {detail.manifest.author}", highlight=False)
    _print_analysis("What the code does", detail.code_analysis)
    console.print(f"\n  [cyan]{'requirements':>14}[/] {', '.join(detail.requirements)}", highlight=False)


@app.command("list")
def list_services(
    category: Annotated[str | None, typer.Option(help="Only this category.")] = None,
    json: JsonOption = False,
) -> None:
    """List the catalog: name, category, main stage and what the code does."""
    with session_scope() as session:
        rows = repository.listing(session, category)
    print_rows(rows, json, {"microservice": "name", "category": "category", "stage": "stage",
                            "what the code does": "summary"})
    if not json:
        console.print(f"[dim]{len(rows)} microservices[/]")
