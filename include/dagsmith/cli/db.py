"""``dagsmith db``: the PostgreSQL+pgvector store."""

from __future__ import annotations

import typer
from sqlalchemy import func, select, text

from dagsmith.cli.output import JsonOption, console, print_json
from dagsmith.config import Settings
from dagsmith.store import schema
from dagsmith.store.db import get_engine, redacted

app = typer.Typer(help="Inspect and upgrade dagsmith's database.", no_args_is_help=True)


@app.command()
def upgrade() -> None:
    """Create the schema or bring it to the newest migration (every command also does this on start)."""
    engine = get_engine()
    console.print(f"schema is current in {redacted(engine.url.render_as_string(hide_password=False))}", highlight=False)


@app.command()
def status(json: JsonOption = False) -> None:
    """Where the store is, its schema revision and how many rows each table holds."""
    settings = Settings.from_env()
    engine = get_engine(settings)
    tables = [schema.Microservice, schema.MicroserviceVersion, schema.Analysis, schema.Embedding,
              schema.Pipeline, schema.PipelineStep, schema.Execution, schema.StepAttempt, schema.Pattern]
    with engine.connect() as connection:
        revision = connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
        counts = {t.__tablename__: connection.execute(select(func.count()).select_from(t)).scalar() for t in tables}
    info = {
        "database": redacted(engine.url.render_as_string(hide_password=False)),
        "embedded": settings.database_url is None,
        "home": str(settings.home),
        "revision": revision,
        "rows": counts,
    }
    if json:
        print_json(info)
        return
    console.print(f"database  {info['database']}" + (" (embedded)" if info["embedded"] else ""), highlight=False)
    console.print(f"revision  {revision}", highlight=False)
    for table, count in counts.items():
        console.print(f"  {table:<22} {count:>8}", highlight=False)
