"""The worker that ran each try: with several workers (Celery), which one to look at."""

from alembic import op
import sqlalchemy as sa

revision = '0008'
down_revision = '0007'


def upgrade() -> None:
    op.add_column('step_attempts', sa.Column('worker', sa.String(length=255), nullable=True))


def downgrade() -> None:
    op.drop_column('step_attempts', 'worker')
