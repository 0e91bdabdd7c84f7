"""The embedded PostgreSQL + pgvector server (the pgserver package) used when no database URL is configured.

The server's data lives under ``DAGSMITH_HOME/postgres`` and is shared by every dagsmith process on the
machine: pgserver serialises start-up with an inter-process lock, keeps the pids of the processes using the server
and stops it when the last one exits. A process killed outright (kill -9) never takes its pid off that list, and
the server would then outlive everyone: here the pids of dead processes are dropped whenever a process joins or
leaves, so the last live user stops it.
"""

from __future__ import annotations

import atexit
import logging
import os
import subprocess
import threading
import warnings
from functools import cache
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from dagsmith.errors import ServiceUnavailable

DATABASE = "dagsmith"
#: The servers this process joined, by data folder.
_JOINED: dict[Path, object] = {}
#: dagsmith's database URL in each server this process joined, by home: checked for once.
_URLS: dict[Path, str] = {}
#: Set by ``leave``: a thread of this process reconnecting afterwards must not start the server again.
_LEFT = threading.Event()


class EmbeddedServerError(ServiceUnavailable, RuntimeError):
    """The embedded server could not start (with the server log's tail to say why)."""


@cache
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
    if _LEFT.is_set():
        raise EmbeddedServerError("this process has left the embedded database: it is ending")
    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset; the fallback is fine
        warnings.simplefilter("ignore")
        import pgserver

    logging.getLogger("pgserver").setLevel(logging.CRITICAL)  # its failures reach the user as ours, log tail included
    pgdata = home / "postgres"
    home.mkdir(parents=True, exist_ok=True)
    _check_data_version(pgdata)
    try:
        server = pgserver.get_server(pgdata, cleanup_mode="stop")
    except Exception as exc:  # pgserver raises CalledProcessError, TimeoutExpired, AssertionError
        log = pgdata / "log"
        tail = log.read_text(errors="replace")[-2000:] if log.is_file() else "(no server log)"
        raise EmbeddedServerError(f"the embedded PostgreSQL under {pgdata} did not start: {exc}\n{tail}") from exc
    if pgdata not in _JOINED:
        _JOINED[pgdata] = server
        _forget_dead_users(server)
        atexit.register(_forget_dead_users, server)  # runs before pgserver's own exit hook, registered earlier
    return server


def _forget_dead_users(server) -> None:
    """Drop the pids of processes that died without leaving from pgserver's list of the server's users (its lock
    and list are pgserver 0.1.4's, pinned)."""
    with server._lock:
        users = server.global_process_id_list.get()
        alive = [pid for pid in users if pid == os.getpid() or _alive(pid)]
        if alive != users:
            server.global_process_id_list.put(alive)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, killed and not yet waited for, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def leave() -> None:
    """Leave every embedded server this process uses now, stopping each one nobody else alive uses: for a process
    about to end without running its exit hooks (``os._exit``)."""
    _LEFT.set()
    for server in _JOINED.values():
        _forget_dead_users(server)
        server.cleanup()


def embedded_url(home: Path) -> str:
    """Start (or join) the embedded server and return a SQLAlchemy URL to dagsmith's database in it. Every session
    asks (a server stopped meanwhile starts again); the database is looked for once per process."""
    server = _server(home)
    if home in _URLS:
        return _URLS[home]
    exists = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE}';")
    if "(1 row)" not in exists:
        server.psql(f"CREATE DATABASE {DATABASE};")
    uri = urlparse(server.get_uri())
    socket_dir = parse_qs(uri.query)["host"][0]
    _URLS[home] = f"postgresql+psycopg://{uri.username or 'postgres'}@/{DATABASE}?host={socket_dir}"
    return _URLS[home]
