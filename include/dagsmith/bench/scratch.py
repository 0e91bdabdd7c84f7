"""A throw-away database for a benchmark run, on the configured server (the embedded one by default)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from dagsmith.config import Settings
from dagsmith.store.db import database_url


@contextmanager
def scratch_database(settings: Settings | None = None) -> Iterator[Settings]:
    """Settings pointing at a new, empty database; it is dropped when the block ends."""
    settings = settings or Settings.from_env()
    url = make_url(database_url(settings))
    name = f"bench_{uuid.uuid4().hex[:10]}"
    admin = create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield Settings(home=settings.home, database_url=url.set(database=name).render_as_string(hide_password=False))
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
