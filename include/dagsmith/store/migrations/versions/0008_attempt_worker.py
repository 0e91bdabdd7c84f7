"""The worker that ran each try: with several workers (Celery), which one to look at.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-27 02:10:00
"""

from alembic import op
import sqlalchemy as sa

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('step_attempts', sa.Column('worker', sa.String(length=255), nullable=True))


def downgrade() -> None:
    op.drop_column('step_attempts', 'worker')
