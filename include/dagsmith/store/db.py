"""Engine, sessions and schema upgrades for dagsmith's PostgreSQL store."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from dagsmith.config import Settings
from dagsmith.errors import ServiceUnavailable
from dagsmith.store.embedded import embedded_url
from dagsmith.store.events import announce

MIGRATIONS = Path(__file__).with_name("migrations")
# Any constant works: it only has to be the same in every dagsmith process.
_MIGRATION_LOCK = 4_212_026
#: How long a database that answered before is waited for when it stops answering (a restart, a failover).
RECONNECT_PATIENCE_SECONDS = 60.0


class DatabaseUnavailable(ServiceUnavailable, RuntimeError):
    """The configured database cannot be reached; the message says which one and how to fix it."""


Row = TypeVar("Row")


def database_url(settings: Settings) -> str:
    if settings.database_url:
        url = settings.database_url
        if url.startswith("postgresql://") or url.startswith("postgres://"):
            url = "postgresql+psycopg://" + url.split("://", 1)[1]
        return url
    return embedded_url(settings.home)


def redacted(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def alembic_config(connection=None):
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def newest_revision() -> str:
    """The newest migration's revision: each migration's revision is its file's number (``0006_model_versions.py``)."""
    return max(path.name.split("_", 1)[0] for path in (MIGRATIONS / "versions").glob("[0-9]*_*.py"))


def _at_newest(connection: Connection) -> bool:
    if connection.execute(text("SELECT to_regclass('alembic_version')")).scalar() is None:
        return False
    return connection.execute(text("SELECT version_num FROM alembic_version")).scalars().all() == [newest_revision()]


def upgrade(engine: Engine) -> None:
    """Bring the schema to the newest migration; concurrent callers wait on an advisory lock. A schema already there
    is left without loading alembic and its scripts, which would cost every new process a second or more."""
    with engine.begin() as connection:
        if _at_newest(connection):
            return
    from alembic import command

    with engine.begin() as connection:
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
        command.upgrade(alembic_config(connection), "head")


def _reconnect_patiently(engine: Engine) -> None:
    """New connections wait for a database that answered before to come back, so a restart between two
    transactions of a run (pooled connections are checked before use) delays the run instead of failing it; a
    database that never answered fails at once (a wrong URL is not worth waiting for)."""
    answered = threading.Event()

    @event.listens_for(engine, "do_connect")
    def connect(dialect, _record, cargs, cparams):
        deadline = time.monotonic() + (RECONNECT_PATIENCE_SECONDS if answered.is_set() else 0.0)
        while True:
            try:
                connection = dialect.connect(*cargs, **cparams)
            except dialect.loaded_dbapi.OperationalError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.5)
                continue
            answered.set()
            return connection


event.listen(Session, "after_flush", announce)  # every session's committed run changes are announced


@cache
def engine_for(url: str) -> Engine:
    engine = create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=5)
    _reconnect_patiently(engine)
    try:
        upgrade(engine)
    except OperationalError as exc:
        raise DatabaseUnavailable(
            f"cannot reach the database at {redacted(url)}: {exc.orig}. Check DAGSMITH_DATABASE_URL, "
            "or unset it to use the embedded server."
        ) from None
    return engine


def get_engine(settings: Settings | None = None) -> Engine:
    """The engine for the configured store, with its schema upgraded to the newest migration."""
    return engine_for(database_url(settings or Settings.from_env()))


@contextmanager
def session_scope(settings: Settings | None = None) -> Iterator[Session]:
    """A transaction: committed when the block ends normally, rolled back on any error."""
    factory = sessionmaker(get_engine(settings), expire_on_commit=False)
    with factory.begin() as session:
        yield session


def stored(session: Session, model: type[Row], key: object, **options: Any) -> Row:
    """The row of ``model`` with primary key ``key``, which the caller knows exists (it recorded it, or a foreign
    key holds it): a missing one is a ``LookupError`` here, not an ``AttributeError`` on None further on."""
    row = session.get(model, key, **options)
    if row is None:
        raise LookupError(f"no {model.__name__} {key}")
    return row
