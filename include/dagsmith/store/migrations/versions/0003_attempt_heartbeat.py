"""A try's heartbeat: the worker running a step stamps it every few seconds, so a dead worker's try is found."""

from alembic import op
import sqlalchemy as sa

revision = '0003'
down_revision = '0002'


def upgrade() -> None:
    op.add_column('step_attempts', sa.Column('heartbeat_at', sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column('step_attempts', 'heartbeat_at')
