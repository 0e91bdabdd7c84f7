"""Answers people gave to the goal reader's questions, read again for the same words on a table of the same shape."""

from alembic import op
import sqlalchemy as sa

revision = '0005'
down_revision = '0004'


def upgrade() -> None:
    op.create_table(
        'goal_answers',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('owner', sa.String(length=100), server_default='', nullable=False),
        sa.Column('table_shape', sa.String(length=64), nullable=False),
        sa.Column('phrase', sa.Text(), nullable=False),
        sa.Column('task_type', sa.String(length=40), nullable=False),
        sa.Column('target', sa.Text(), nullable=True),
        sa.Column('chosen_by', sa.String(length=100), nullable=False),
        sa.Column('how', sa.String(length=40), nullable=False),
        sa.Column('chosen_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('owner', 'table_shape', 'phrase', name='uq_goal_answers_key'),
    )


def downgrade() -> None:
    op.drop_table('goal_answers')
