"""Console output shared by the commands: JSON for machines, rich text for people, errors on stderr."""

from __future__ import annotations

import json
from typing import Annotated, Any, NoReturn

import typer
from pydantic import BaseModel
from rich.console import Console
from rich.markup import escape
from rich.table import Table

console = Console()
errors = Console(stderr=True)

JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def to_jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: to_jsonable(v) for k, v in value.items()}
    return value


def print_json(value: Any) -> None:
    typer.echo(json.dumps(to_jsonable(value), indent=2, default=str))


def print_rows(rows: list[dict[str, Any]], json: bool, columns: dict[str, str]) -> None:
    """A listing: its rows as JSON, or for people as a table of ``columns`` (heading: key of the row)."""
    if json:
        print_json(rows)
        return
    table = Table(*columns, box=None)
    for row in rows:
        table.add_row(*("" if row[key] is None else str(row[key]) for key in columns.values()))
    console.print(table)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print ``message`` (plain text: brackets from file or column names are shown, never read as markup)."""
    errors.print(f"[bold red]error:[/] {escape(message)}", highlight=False)
    raise SystemExit(code)


def progress(message: str) -> None:
    errors.print(f"[dim]{escape(message)}[/]", highlight=False, soft_wrap=True)
