"""``dagsmith datasets``: the real datasets shipped inside installed packages, for trying dagsmith offline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dagsmith import datasets
from dagsmith.cli.output import JsonOption, console, fail, print_rows
from dagsmith.data.dictionary import write_sidecar

app = typer.Typer(help="List and export the bundled sample datasets.", no_args_is_help=True)


@app.command("list")
def list_datasets(json: JsonOption = False) -> None:
    """The sample datasets and where they come from."""
    rows = [{"name": i.name, "origin": i.origin, "description": i.description} for i in datasets.DATASETS.values()]
    print_rows(rows, json, {"name": "name", "origin": "origin", "description": "description"})


@app.command()
def export(
    name: Annotated[str, typer.Argument(help="Dataset name (see `dagsmith datasets list`).")],
    path: Annotated[Path, typer.Argument(help="Where to write it; .csv, .tsv, .parquet, .json or .xlsx.")],
) -> None:
    """Write a sample dataset to a file."""
    try:
        frame = datasets.load(name)
    except KeyError as exc:
        fail(str(exc.args[0]), code=2)
    writers = {
        ".csv": lambda: frame.to_csv(path, index=False), ".tsv": lambda: frame.to_csv(path, sep="\t", index=False),
        ".parquet": lambda: frame.to_parquet(path, index=False), ".json": lambda: frame.to_json(path, orient="records"),
        ".xlsx": lambda: frame.to_excel(path, index=False),
    }
    writer = writers.get(path.suffix.lower())
    if writer is None:
        fail(f"cannot write '{path.suffix}' files; use one of {', '.join(writers)}", code=2)
    path.parent.mkdir(parents=True, exist_ok=True)
    writer()
    console.print(f"wrote {len(frame):,} rows x {frame.shape[1]} columns of {name} to {path}", highlight=False)
    if described := datasets.dictionary(name, list(frame.columns)):
        sidecar = write_sidecar(path, described)
        console.print(f"wrote what {len(described)} of its columns hold to {sidecar}", highlight=False)
