"""A random container label per try: attempt ids repeat across stores, and stores may share a container engine."""

from alembic import op
import sqlalchemy as sa

revision = '0010'
down_revision = '0009'


def upgrade() -> None:
    op.add_column('step_attempts', sa.Column('container_label', sa.String(32), nullable=True))
    # Tries recorded before carried their id as the label: their containers keep matching.
    op.execute("UPDATE step_attempts SET container_label = id::text")
    op.alter_column('step_attempts', 'container_label', nullable=False)


def downgrade() -> None:
    op.drop_column('step_attempts', 'container_label')
