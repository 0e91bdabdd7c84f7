"""Pipelines can be shared with every user of the UI.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 12:00:00
"""

from alembic import op
import sqlalchemy as sa

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('pipelines', sa.Column('shared', sa.Boolean(), server_default=sa.text('false'), nullable=False))


def downgrade() -> None:
    op.drop_column('pipelines', 'shared')
