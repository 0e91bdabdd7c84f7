"""The versions of pipelines' models, champion and challengers, and the scoring runs made with them."""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

revision = '0006'
down_revision = '0005'


def upgrade() -> None:
    op.create_table(
        'model_versions',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('pipeline_id', sa.Integer(), nullable=False),
        sa.Column('version', sa.Integer(), nullable=False),
        sa.Column('execution_id', sa.Integer(), nullable=True),
        sa.Column('status', sa.String(length=20), nullable=False),
        sa.Column('metrics', postgresql.JSONB(astext_type=sa.Text()), server_default='{}', nullable=False),
        sa.Column('fingerprint', sa.String(length=64), nullable=False),
        sa.Column('schema', postgresql.JSONB(astext_type=sa.Text()), server_default='{}', nullable=False),
        sa.Column('path', sa.Text(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
        sa.Column('decision', postgresql.JSONB(astext_type=sa.Text()), server_default='{}', nullable=False),
        sa.CheckConstraint("status IN ('champion', 'challenger', 'retired')", name='ck_model_versions_status'),
        sa.ForeignKeyConstraint(['execution_id'], ['executions.id'], ondelete='SET NULL'),
        sa.ForeignKeyConstraint(['pipeline_id'], ['pipelines.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('pipeline_id', 'version'),
    )
    op.create_index(op.f('ix_model_versions_pipeline_id'), 'model_versions', ['pipeline_id'], unique=False)
    op.create_index('uq_model_versions_champion', 'model_versions', ['pipeline_id'], unique=True,
                    postgresql_where=sa.text("status = 'champion'"))
    op.create_table(
        'scoring_runs',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('version_id', sa.Integer(), nullable=False),
        sa.Column('owner', sa.String(length=100), nullable=False),
        sa.Column('dataset', sa.Text(), nullable=False),
        sa.Column('output', sa.Text(), nullable=False),
        sa.Column('rows', sa.Integer(), nullable=False),
        sa.Column('report', postgresql.JSONB(astext_type=sa.Text()), server_default='{}', nullable=False),
        sa.Column('drifted', postgresql.JSONB(astext_type=sa.Text()), server_default='[]', nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
        sa.ForeignKeyConstraint(['version_id'], ['model_versions.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index(op.f('ix_scoring_runs_version_id'), 'scoring_runs', ['version_id'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_scoring_runs_version_id'), table_name='scoring_runs')
    op.drop_table('scoring_runs')
    op.drop_index('uq_model_versions_champion', table_name='model_versions')
    op.drop_index(op.f('ix_model_versions_pipeline_id'), table_name='model_versions')
    op.drop_table('model_versions')
