"""The embedded server refuses a data folder it cannot open with what to do, before trying to start it."""

from __future__ import annotations

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
