"""What became of a model version in MLflow: its run and registered version, or why it is not there."""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

revision = '0007'
down_revision = '0006'


def upgrade() -> None:
    op.add_column('model_versions', sa.Column('mlflow', postgresql.JSONB(astext_type=sa.Text()), server_default='{}',
                                              nullable=False))


def downgrade() -> None:
    op.drop_column('model_versions', 'mlflow')
