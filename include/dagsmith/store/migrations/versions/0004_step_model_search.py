"""A modelling step's search: the candidates fitted side by side, their budget and the metric that picks one."""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

revision = '0004'
down_revision = '0003'


def upgrade() -> None:
    op.add_column('pipeline_steps', sa.Column('search', postgresql.JSONB(astext_type=sa.Text()), server_default='{}',
                                              nullable=False))


def downgrade() -> None:
    op.drop_column('pipeline_steps', 'search')
