"""Migrations on the real embedded PostgreSQL with pgvector."""

from __future__ import annotations

import subprocess
import sys
import threading

from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect, text

from dagsmith.store.db import _MIGRATION_LOCK, alembic_config, get_engine, newest_revision, upgrade

TABLES = {
    "microservices", "microservice_versions", "analyses", "embeddings", "pipelines", "pipeline_steps",
    "executions", "step_attempts", "patterns", "goal_answers", "model_versions", "scoring_runs", "alembic_version",
}


def test_upgrade_creates_schema_with_vector_indexes(settings):
    engine = get_engine(settings)
    assert set(inspect(engine).get_table_names()) >= TABLES
    with engine.connect() as connection:
        assert connection.execute(text("SELECT extversion FROM pg_extension WHERE extname = 'vector'")).scalar()
        indexes = dict(connection.execute(text(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'embeddings'")).all())
        column = connection.execute(text(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = 'embeddings'::regclass AND attname = 'embedding'")).scalar()
    assert column == "vector(384)"
    for mode in ("code", "documentation"):
        definition = indexes[f"ix_embeddings_hnsw_{mode}"]
        assert "USING hnsw" in definition and "vector_cosine_ops" in definition and f"'{mode}'" in definition


def test_downgrade_and_upgrade_round_trip_without_drift(settings):
    engine = get_engine(settings)
    with engine.begin() as connection:
        command.downgrade(alembic_config(connection), "base")
    assert set(inspect(engine).get_table_names()) == {"alembic_version"}
    upgrade(engine)
    assert set(inspect(engine).get_table_names()) >= TABLES
    with engine.begin() as connection:
        command.check(alembic_config(connection))  # raises if the models and the migrations disagree


def test_concurrent_first_upgrades_do_not_collide(settings):
    """Several processes starting on an empty database at once: one migrates, the others wait."""
    script = (
        "import sys; from sqlalchemy import create_engine; from dagsmith.store.db import upgrade; "
        "upgrade(create_engine(sys.argv[1]))"
    )
    processes = [subprocess.Popen([sys.executable, "-c", script, settings.database_url], stderr=subprocess.PIPE)
                 for _ in range(4)]
    errors = [p.communicate(timeout=120)[1].decode() for p in processes]
    assert all(p.returncode == 0 for p in processes), errors
    engine = create_engine(settings.database_url)
    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM alembic_version")).scalar() == 1
    assert set(inspect(engine).get_table_names()) >= TABLES


def test_a_schema_at_the_newest_migration_is_not_migrated_again(settings):
    """A new process finds the schema current with one query: it neither loads alembic nor waits for the migration
    lock, which a process migrating another database may hold."""
    engine = get_engine(settings)
    assert newest_revision() == ScriptDirectory.from_config(alembic_config()).get_current_head()
    with engine.connect() as holder:
        holder.execute(text("SELECT pg_advisory_lock(:key)"), {"key": _MIGRATION_LOCK})
        checked = threading.Thread(target=upgrade, args=(create_engine(settings.database_url),), daemon=True)
        checked.start()
        checked.join(timeout=30)
        finished = not checked.is_alive()
        holder.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": _MIGRATION_LOCK})
    checked.join()
    assert finished, "the upgrade waited for the migration lock though the schema was current"
