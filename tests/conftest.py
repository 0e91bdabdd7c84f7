"""Shared fixtures: a real embedded PostgreSQL+pgvector server and the real embedding model."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from dagsmith.catalog.upload import sync
from dagsmith.config import Settings
from dagsmith.embeddings import default_embedder
from dagsmith.store.databases import scratch_database
from dagsmith.store.db import engine_for
from dagsmith.store.embedded import embedded_url

# Pipelines built in tests search their models for a few seconds, not the minutes a real table earns: the tests
# check what the search does, not how good its models get (the benchmark measures that).
os.environ.setdefault("DAGSMITH_SEARCH_SECONDS", "3")

#: Test lanes, read from the fixtures a test uses (its fixture closure), so a new test lands in the right lane by
#: what it asks for: `make test-fast` runs the tests in none of them. A fixture named here starts what its lane names.
LANES = {
    "db": ("the embedded PostgreSQL server", {"server_home"}),
    "services": ("shipped microservices run as processes", {"run", "module_run", "forked_services"}),
    "containers": ("the container runtime (podman)", {"runtime", "engine"}),
    "airflow": ("an Airflow deployment: api-server, scheduler, dag-processor", {"served", "deployment"}),
}

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT / "microservices"
UPLOADS = ROOT / "tests" / "data" / "uploads"


@pytest.fixture(scope="session")
def server_home() -> Iterator[Path]:
    """DAGSMITH_HOME of this test session's embedded server: started once, stopped and deleted at the end.

    It lives outside pytest's private temporary tree because the server runs as its own system user.
    """
    import pgserver

    home = Path(tempfile.mkdtemp(prefix="dagsmith-test-"))
    with pgserver.get_server(home / "postgres", cleanup_mode="delete"):
        embedded_url(home)
        yield home
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def settings(server_home, tmp_path) -> Iterator[Settings]:
    """Settings pointing at a new, empty database on the embedded server (isolated per test)."""
    with scratch_database(Settings(home=server_home, database_url=None)) as scratch:
        yield Settings(home=tmp_path / "home", database_url=scratch.database_url)


@pytest.fixture(scope="session")
def embedder():
    return default_embedder()


@pytest.fixture(scope="session")
def catalog_template(server_home, tmp_path_factory, embedder) -> Iterator[str]:
    """The name of a database holding the whole shipped catalog, synced once for the session (analysing and
    embedding 131 services takes about 40 s) and never connected to again: tests get copies (`catalog_copy`)."""
    with scratch_database(Settings(home=server_home, database_url=None)) as scratch:
        settings = Settings(home=tmp_path_factory.mktemp("template-home"), database_url=scratch.database_url)
        results = sync(CATALOG, settings, embedder)
        rejected = [(r.name, [str(f) for f in r.findings]) for r in results if r.outcome == "rejected"]
        assert not rejected, f"shipped microservices were rejected: {rejected}"
        engine_for(scratch.database_url).dispose()  # Postgres copies a database only while nobody is connected
        yield make_url(scratch.database_url).database


@contextmanager
def catalog_copy(server_home: Path, template: str, home: Path) -> Iterator[Settings]:
    """A database of its own holding the shipped catalog as synced (a copy of `catalog_template`), for ``home``."""
    with scratch_database(Settings(home=server_home, database_url=None), template=template) as scratch:
        yield Settings(home=home, database_url=scratch.database_url)


@pytest.fixture
def store(server_home, catalog_template, tmp_path) -> Iterator[Settings]:
    """A database of the test's own holding the shipped catalog (runs write pipelines and history into it)."""
    with catalog_copy(server_home, catalog_template, tmp_path / "home") as settings:
        yield settings


@pytest.fixture(scope="session")
def catalog_settings(server_home, tmp_path_factory, catalog_template) -> Iterator[Settings]:
    """A database holding the whole shipped catalog for the session (read-only for tests)."""
    with catalog_copy(server_home, catalog_template, tmp_path_factory.mktemp("catalog-home")) as settings:
        yield settings


def pytest_configure(config: pytest.Config) -> None:
    for lane, (what, _) in LANES.items():
        config.addinivalue_line("markers", f"{lane}: needs {what} (set from the test's fixtures)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        for lane, (_, fixtures) in LANES.items():
            if used & fixtures:
                item.add_marker(lane)


#: Seconds spent per test file (set-up, call and tear-down) and per xdist worker, summed from the reports the
#: controller receives, and when each worker reported last: where `make test`'s time goes, to keep it under its aim
#: and its workers evenly loaded.
_SPENT: Counter[str] = Counter()
_BUSY: Counter[str] = Counter()
_DONE: dict[str, float] = {}
_STARTED = time.monotonic()
SPENT_SHOWN = 15


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _SPENT[report.nodeid.split("::", 1)[0]] += report.duration
    node = getattr(report, "node", None)  # the xdist worker that ran it, as the controller sees it
    worker = node.gateway.id if node is not None else "main"
    _BUSY[worker] += report.duration
    _DONE[worker] = time.monotonic() - _STARTED


def pytest_terminal_summary(terminalreporter) -> None:
    if not _SPENT:
        return
    terminalreporter.section("time per test file and per worker")
    for path, seconds in _SPENT.most_common(SPENT_SHOWN):
        terminalreporter.write_line(f"{seconds:8.1f} s  {path}")
    terminalreporter.write_line(f"{sum(_SPENT.values()):8.1f} s  in all, over {len(_SPENT)} files; busy: "
                                + ", ".join(f"{worker} {seconds:.0f} s (last done at {_DONE[worker]:.0f} s)"
                                            for worker, seconds in sorted(_BUSY.items())))
