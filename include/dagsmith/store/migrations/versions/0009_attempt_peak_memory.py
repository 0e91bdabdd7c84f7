"""The most memory each try held at once: which steps a table's size strains, and how close to its limit."""

from alembic import op
import sqlalchemy as sa

revision = '0009'
down_revision = '0008'


def upgrade() -> None:
    op.add_column('step_attempts', sa.Column('peak_mb', sa.Integer(), nullable=True))


def downgrade() -> None:
    op.drop_column('step_attempts', 'peak_mb')
