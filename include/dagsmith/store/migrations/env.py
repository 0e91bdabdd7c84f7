"""Alembic environment: migrations run on the connection dagsmith hands over (see store.db.upgrade)."""

from alembic import context

from dagsmith.store.schema import Base

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("dagsmith migrations run through `dagsmith db upgrade` (store.db.upgrade)")
context.configure(connection=connection, target_metadata=Base.metadata, compare_type=True)
with context.begin_transaction():
    context.run_migrations()
