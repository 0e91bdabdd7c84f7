"""Console output shared by the commands: JSON for machines, rich text for people, errors on stderr."""

from __future__ import annotations

import json
from typing import Any, NoReturn

import typer
from pydantic import BaseModel
from rich.console import Console
from rich.markup import escape

console = Console()
errors = Console(stderr=True)


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


def fail(message: str, code: int = 1) -> NoReturn:
    """Print ``message`` (plain text: brackets from file or column names are shown, never read as markup)."""
    errors.print(f"[bold red]error:[/] {escape(message)}", highlight=False)
    raise SystemExit(code)


def progress(message: str) -> None:
    errors.print(f"[dim]{escape(message)}[/]", highlight=False)
