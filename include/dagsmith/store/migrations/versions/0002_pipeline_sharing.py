"""Pipelines can be shared with every user of the UI."""

from alembic import op
import sqlalchemy as sa

revision = '0002'
down_revision = '0001'


def upgrade() -> None:
    op.add_column('pipelines', sa.Column('shared', sa.Boolean(), server_default=sa.text('false'), nullable=False))


def downgrade() -> None:
    op.drop_column('pipelines', 'shared')
