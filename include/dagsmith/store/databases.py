"""Databases on the configured server (the embedded one by default) beside dagsmith's own: named ones that
outlive a process (a benchmark's history, the local deployment's Airflow metadata) and throw-away ones."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from dagsmith.config import Settings
from dagsmith.store.db import database_url


def _admin(settings: Settings):
    return create_engine(make_url(database_url(settings)).set(database="postgres"), isolation_level="AUTOCOMMIT")


def named_database(settings: Settings, name: str, *, home: Path | None = None,
                   template: str | None = None) -> Settings:
    """Settings pointing at database ``name`` on the same server, created when it does not exist yet (as a copy
    of database ``template`` when one is named: Postgres copies its files, far faster than filling it again)."""
    admin = _admin(settings)
    try:
        with admin.connect() as connection:
            exists = connection.scalar(text("SELECT 1 FROM pg_database WHERE datname = :name"), {"name": name})
            if not exists:
                copy = f' TEMPLATE "{template}"' if template else ""
                connection.execute(text(f'CREATE DATABASE "{name}"{copy}'))
    finally:
        admin.dispose()
    url = make_url(database_url(settings)).set(database=name)
    return Settings(home=home or settings.home, database_url=url.render_as_string(hide_password=False))


def drop_database(settings: Settings, name: str) -> None:
    admin = _admin(settings)
    try:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


@contextmanager
def scratch_database(settings: Settings | None = None, template: str | None = None) -> Iterator[Settings]:
    """Settings pointing at a new database, empty or a copy of ``template`` (which nothing may be connected to
    meanwhile); it is dropped when the block ends."""
    settings = settings or Settings.from_env()
    name = f"bench_{uuid.uuid4().hex[:10]}"
    scratch = named_database(settings, name, template=template)
    try:
        yield scratch
    finally:
        drop_database(settings, name)
