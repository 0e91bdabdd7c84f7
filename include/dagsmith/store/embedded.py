"""The embedded PostgreSQL + pgvector server (the pgserver package) used when no database URL is configured.

The server's data lives under ``DAGSMITH_HOME/postgres`` and is shared by every dagsmith process on the
machine: pgserver serialises start-up with an inter-process lock and stops the server when the last
process using it exits.
"""

from __future__ import annotations

import logging
import subprocess
import warnings
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from dagsmith.errors import ServiceUnavailable

DATABASE = "dagsmith"


class EmbeddedServerError(ServiceUnavailable, RuntimeError):
    """The embedded server could not start (with the server log's tail to say why)."""


def _bundled_major() -> str:
    """The major version of the PostgreSQL the pgserver package ships (e.g. '16')."""
    from pgserver._commands import POSTGRES_BIN_PATH

    version = subprocess.run([str(POSTGRES_BIN_PATH / "postgres"), "--version"], capture_output=True, text=True,
                             check=True).stdout  # "postgres (PostgreSQL) 16.2"
    return version.split()[-1].split(".")[0]


def _check_data_version(pgdata: Path) -> None:
    """A data folder from another PostgreSQL major (an older dagsmith bundled 18) cannot be opened: say so plainly
    instead of failing on its configuration file."""
    marker = pgdata / "PG_VERSION"
    if not marker.is_file():
        return
    written, bundled = marker.read_text().strip(), _bundled_major()
    if written != bundled:
        raise EmbeddedServerError(
            f"the embedded database under {pgdata} was written by PostgreSQL {written}, and this dagsmith runs "
            f"PostgreSQL {bundled}, which cannot open it. Move that folder aside (dagsmith then starts a new, empty "
            f"one and `dagsmith catalog sync` refills the catalog), or set DAGSMITH_DATABASE_URL to a PostgreSQL "
            f"with pgvector.")


def _server(home: Path):
    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset; the fallback is fine
        warnings.simplefilter("ignore")
        import pgserver

    logging.getLogger("pgserver").setLevel(logging.CRITICAL)  # its failures reach the user as ours, log tail included
    pgdata = home / "postgres"
    home.mkdir(parents=True, exist_ok=True)
    _check_data_version(pgdata)
    try:
        return pgserver.get_server(pgdata, cleanup_mode="stop")
    except Exception as exc:  # pgserver raises CalledProcessError, TimeoutExpired, AssertionError
        log = pgdata / "log"
        tail = log.read_text(errors="replace")[-2000:] if log.is_file() else "(no server log)"
        raise EmbeddedServerError(f"the embedded PostgreSQL under {pgdata} did not start: {exc}\n{tail}") from exc


def embedded_url(home: Path) -> str:
    """Start (or join) the embedded server and return a SQLAlchemy URL to dagsmith's database in it."""
    server = _server(home)
    exists = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE}';")
    if "(1 row)" not in exists:
        server.psql(f"CREATE DATABASE {DATABASE};")
    uri = urlparse(server.get_uri())
    socket_dir = parse_qs(uri.query)["host"][0]
    return f"postgresql+psycopg://{uri.username or 'postgres'}@/{DATABASE}?host={socket_dir}"
