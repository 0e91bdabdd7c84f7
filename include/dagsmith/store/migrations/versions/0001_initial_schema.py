"""Initial schema: catalog (versions, analyses, embeddings), pipelines, executions, learned patterns."""

from alembic import op
import sqlalchemy as sa
import pgvector.sqlalchemy
from sqlalchemy.dialects import postgresql

revision = '0001'
down_revision = None


def upgrade() -> None:
    op.execute('CREATE EXTENSION IF NOT EXISTS vector')
    op.create_table('microservices',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('category', sa.String(length=40), nullable=False),
    sa.Column('current_version_id', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name')
    )
    op.create_table('pipelines',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('goal', sa.Text(), nullable=False),
    sa.Column('owner', sa.String(length=100), nullable=False),
    sa.Column('status', sa.String(length=20), server_default='draft', nullable=False),
    sa.Column('task_type', sa.String(length=40), nullable=True),
    sa.Column('target', sa.String(length=200), nullable=True),
    sa.Column('dataset', sa.Text(), nullable=False),
    sa.Column('schedule', sa.String(length=100), nullable=True),
    sa.Column('plan', postgresql.JSONB(astext_type=sa.Text()), server_default='{}', nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.CheckConstraint("status IN ('draft', 'ready', 'running', 'completed', 'failed')", name='ck_pipelines_status'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index(op.f('ix_pipelines_owner'), 'pipelines', ['owner'], unique=False)
    op.create_table('executions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('pipeline_id', sa.Integer(), nullable=False),
    sa.Column('owner', sa.String(length=100), nullable=False),
    sa.Column('status', sa.String(length=20), server_default='running', nullable=False),
    sa.Column('dataset', sa.Text(), nullable=False),
    sa.Column('workspace', sa.Text(), nullable=True),
    sa.Column('airflow_run_id', sa.String(length=250), nullable=True),
    sa.Column('started_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('seconds', sa.Float(), nullable=True),
    sa.Column('trace', postgresql.JSONB(astext_type=sa.Text()), server_default='{}', nullable=False),
    sa.Column('error', sa.Text(), nullable=True),
    sa.CheckConstraint("status IN ('draft', 'ready', 'running', 'completed', 'failed')", name='ck_executions_status'),
    sa.ForeignKeyConstraint(['pipeline_id'], ['pipelines.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index(op.f('ix_executions_pipeline_id'), 'executions', ['pipeline_id'], unique=False)
    op.create_table('microservice_versions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('microservice_id', sa.Integer(), nullable=False),
    sa.Column('content_hash', sa.String(length=64), nullable=False),
    sa.Column('manifest', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.Column('files', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.Column('size_bytes', sa.Integer(), nullable=False),
    sa.Column('origin', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['microservice_id'], ['microservices.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('microservice_id', 'content_hash')
    )
    op.create_index(op.f('ix_microservice_versions_microservice_id'), 'microservice_versions', ['microservice_id'],
                    unique=False)
    op.create_foreign_key('fk_microservices_current_version', 'microservices', 'microservice_versions',
                          ['current_version_id'], ['id'])
    op.create_table('patterns',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('owner', sa.String(length=100), server_default='', nullable=False),
    sa.Column('stage', sa.String(length=40), nullable=False),
    sa.Column('microservice_id', sa.Integer(), nullable=False),
    sa.Column('next_microservice_id', sa.Integer(), nullable=True),
    sa.Column('successes', sa.Integer(), server_default='0', nullable=False),
    sa.Column('failures', sa.Integer(), server_default='0', nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.CheckConstraint("kind IN ('stage', 'transition')", name='ck_patterns_kind'),
    sa.ForeignKeyConstraint(['microservice_id'], ['microservices.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['next_microservice_id'], ['microservices.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('kind', 'owner', 'stage', 'microservice_id', 'next_microservice_id', name='uq_patterns_key',
                        postgresql_nulls_not_distinct=True)
    )
    op.create_index(op.f('ix_patterns_microservice_id'), 'patterns', ['microservice_id'], unique=False)
    op.create_table('pipeline_steps',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('pipeline_id', sa.Integer(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('stage', sa.String(length=40), nullable=False),
    sa.Column('microservice_id', sa.Integer(), nullable=True),
    sa.Column('params', postgresql.JSONB(astext_type=sa.Text()), server_default='{}', nullable=False),
    sa.Column('depends_on', postgresql.JSONB(astext_type=sa.Text()), server_default='[]', nullable=False),
    sa.Column('expected_io', postgresql.JSONB(astext_type=sa.Text()), server_default='{}', nullable=False),
    sa.Column('alternatives', postgresql.JSONB(astext_type=sa.Text()), server_default='[]', nullable=False),
    sa.Column('status', sa.String(length=20), server_default='pending', nullable=False),
    sa.CheckConstraint("status IN ('pending', 'running', 'completed', 'failed', 'skipped')",
                       name='ck_pipeline_steps_status'),
    sa.ForeignKeyConstraint(['microservice_id'], ['microservices.id'], ),
    sa.ForeignKeyConstraint(['pipeline_id'], ['pipelines.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('pipeline_id', 'position')
    )
    op.create_index(op.f('ix_pipeline_steps_pipeline_id'), 'pipeline_steps', ['pipeline_id'], unique=False)
    op.create_table('analyses',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('version_id', sa.Integer(), nullable=False),
    sa.Column('mode', sa.String(length=20), nullable=False),
    sa.Column('analyzer', sa.String(length=100), nullable=False),
    sa.Column('analyzer_version', sa.String(length=40), nullable=False),
    sa.Column('analyzed_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('result', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.CheckConstraint("mode IN ('code', 'documentation')", name='ck_analyses_mode'),
    sa.ForeignKeyConstraint(['version_id'], ['microservice_versions.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('version_id', 'mode', 'analyzer', 'analyzer_version')
    )
    op.create_index(op.f('ix_analyses_version_id'), 'analyses', ['version_id'], unique=False)
    op.create_table('step_attempts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('execution_id', sa.Integer(), nullable=False),
    sa.Column('step_id', sa.Integer(), nullable=False),
    sa.Column('attempt', sa.Integer(), nullable=False),
    sa.Column('microservice_id', sa.Integer(), nullable=True),
    sa.Column('params', postgresql.JSONB(astext_type=sa.Text()), server_default='{}', nullable=False),
    sa.Column('status', sa.String(length=20), server_default='running', nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('error_class', sa.String(length=60), nullable=True),
    sa.Column('error_text', sa.Text(), nullable=True),
    sa.Column('decision', postgresql.JSONB(astext_type=sa.Text()), server_default='{}', nullable=False),
    sa.CheckConstraint("status IN ('pending', 'running', 'completed', 'failed', 'skipped')",
                       name='ck_step_attempts_status'),
    sa.ForeignKeyConstraint(['execution_id'], ['executions.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['microservice_id'], ['microservices.id'], ),
    sa.ForeignKeyConstraint(['step_id'], ['pipeline_steps.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index(op.f('ix_step_attempts_execution_id'), 'step_attempts', ['execution_id'], unique=False)
    op.create_index(op.f('ix_step_attempts_step_id'), 'step_attempts', ['step_id'], unique=False)
    op.create_table('embeddings',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('analysis_id', sa.Integer(), nullable=False),
    sa.Column('microservice_id', sa.Integer(), nullable=False),
    sa.Column('version_id', sa.Integer(), nullable=False),
    sa.Column('mode', sa.String(length=20), nullable=False),
    sa.Column('model', sa.String(length=200), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('embedding', pgvector.sqlalchemy.vector.VECTOR(dim=384), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['analysis_id'], ['analyses.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['microservice_id'], ['microservices.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['version_id'], ['microservice_versions.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('analysis_id')
    )
    for mode in ('code', 'documentation'):
        op.create_index(f'ix_embeddings_hnsw_{mode}', 'embeddings', ['embedding'], unique=False,
                        postgresql_using='hnsw', postgresql_with={'m': 16, 'ef_construction': 64},
                        postgresql_ops={'embedding': 'vector_cosine_ops'}, postgresql_where=sa.text(f"mode = '{mode}'"))
    op.create_index(op.f('ix_embeddings_microservice_id'), 'embeddings', ['microservice_id'], unique=False)
    op.create_index(op.f('ix_embeddings_version_id'), 'embeddings', ['version_id'], unique=False)


def downgrade() -> None:
    op.drop_constraint('fk_microservices_current_version', 'microservices', type_='foreignkey')
    op.drop_index(op.f('ix_embeddings_version_id'), table_name='embeddings')
    op.drop_index(op.f('ix_embeddings_microservice_id'), table_name='embeddings')
    for mode in ('code', 'documentation'):
        op.drop_index(f'ix_embeddings_hnsw_{mode}', table_name='embeddings')
    op.drop_table('embeddings')
    op.drop_index(op.f('ix_step_attempts_step_id'), table_name='step_attempts')
    op.drop_index(op.f('ix_step_attempts_execution_id'), table_name='step_attempts')
    op.drop_table('step_attempts')
    op.drop_index(op.f('ix_analyses_version_id'), table_name='analyses')
    op.drop_table('analyses')
    op.drop_index(op.f('ix_pipeline_steps_pipeline_id'), table_name='pipeline_steps')
    op.drop_table('pipeline_steps')
    op.drop_index(op.f('ix_patterns_microservice_id'), table_name='patterns')
    op.drop_table('patterns')
    op.drop_index(op.f('ix_microservice_versions_microservice_id'), table_name='microservice_versions')
    op.drop_table('microservice_versions')
    op.drop_index(op.f('ix_executions_pipeline_id'), table_name='executions')
    op.drop_table('executions')
    op.drop_index(op.f('ix_pipelines_owner'), table_name='pipelines')
    op.drop_table('pipelines')
    op.drop_table('microservices')
