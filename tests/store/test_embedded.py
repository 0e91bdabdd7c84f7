"""The embedded server refuses a data folder it cannot open with what to do, before trying to start it; a process
that joined it asks it again for each session without starting a process."""

from __future__ import annotations

import sys

import pytest

from dagsmith.store.embedded import EmbeddedServerError, embedded_url


def test_a_data_folder_from_another_postgresql_major_is_refused_with_what_to_do(tmp_path):
    pgdata = tmp_path / "postgres"
    pgdata.mkdir()
    (pgdata / "PG_VERSION").write_text("18\n")  # what an older dagsmith's PostgreSQL 18 left
    with pytest.raises(EmbeddedServerError, match=r"written by PostgreSQL 18, and this dagsmith runs PostgreSQL 16, "
                                                  r"which cannot open it\. Move that folder aside"):
        embedded_url(tmp_path)
    assert sorted(p.name for p in pgdata.iterdir()) == ["PG_VERSION"]  # left as it was


#: Processes started while a test watches (``sys.addaudithook`` cannot be removed: it records only while watched).
_STARTED: list | None = None


def _record_process(event: str, args: tuple) -> None:
    if event == "subprocess.Popen" and _STARTED is not None:
        _STARTED.append(args[1])


sys.addaudithook(_record_process)


def test_each_session_asks_the_joined_server_without_starting_a_process(server_home):
    global _STARTED
    url = embedded_url(server_home)
    _STARTED = []
    try:
        assert [embedded_url(server_home) for _ in range(3)] == [url] * 3
        started = _STARTED
    finally:
        _STARTED = None
    assert started == [], "psql and postgres --version ran for every session: about 80 ms each on a busy machine"
