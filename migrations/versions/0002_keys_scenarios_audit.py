"""keys scenarios audit

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('api_keys',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('name', sa.String(length=128), nullable=False),
    sa.Column('role', sa.String(length=16), nullable=False),
    sa.Column('prefix', sa.String(length=16), nullable=False),
    sa.Column('key_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('created_by', sa.String(length=128), nullable=True),
    sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_api_keys')),
    sa.UniqueConstraint('key_hash', name=op.f('uq_api_keys_key_hash')),
    sa.UniqueConstraint('name', name=op.f('uq_api_keys_name'))
    )
    with op.batch_alter_table('api_keys', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_api_keys_prefix'), ['prefix'], unique=False)

    op.create_table('audit_events',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('actor', sa.String(length=128), nullable=False),
    sa.Column('action', sa.String(length=64), nullable=False),
    sa.Column('target', sa.String(length=200), nullable=False),
    sa.Column('before', sa.JSON(), nullable=True),
    sa.Column('after', sa.JSON(), nullable=True),
    sa.Column('request_id', sa.String(length=128), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_audit_events'))
    )
    with op.batch_alter_table('audit_events', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_audit_events_actor'), ['actor'], unique=False)
        batch_op.create_index(batch_op.f('ix_audit_events_at'), ['at'], unique=False)
        batch_op.create_index(batch_op.f('ix_audit_events_target'), ['target'], unique=False)

    op.create_table('scenario_revisions',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('scenario_id', sa.Integer(), nullable=False),
    sa.Column('revision', sa.Integer(), nullable=False),
    sa.Column('action', sa.String(length=16), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('tags', sa.JSON(), nullable=False),
    sa.Column('request', sa.JSON(), nullable=False),
    sa.Column('estimate', sa.JSON(), nullable=False),
    sa.Column('prices', sa.JSON(), nullable=False),
    sa.Column('author', sa.String(length=128), nullable=False),
    sa.Column('request_id', sa.String(length=128), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_scenario_revisions')),
    sa.UniqueConstraint('scenario_id', 'revision', name=op.f('uq_scenario_revisions_scenario_id'))
    )
    with op.batch_alter_table('scenario_revisions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_scenario_revisions_scenario_id'), ['scenario_id'], unique=False)

    op.create_table('scenarios',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('tags', sa.JSON(), nullable=False),
    sa.Column('request', sa.JSON(), nullable=False),
    sa.Column('estimate', sa.JSON(), nullable=False),
    sa.Column('prices', sa.JSON(), nullable=False),
    sa.Column('summary', sa.JSON(), nullable=False),
    sa.Column('owner', sa.String(length=128), nullable=False),
    sa.Column('version', sa.Integer(), server_default='1', nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_scenarios')),
    sa.UniqueConstraint('name', name=op.f('uq_scenarios_name'))
    )
    with op.batch_alter_table('scenarios', schema=None) as batch_op:
        batch_op.create_index('ix_scenarios_kind_updated_at_id', ['kind', 'updated_at', 'id'], unique=False)
        batch_op.create_index('ix_scenarios_owner_updated_at_id', ['owner', 'updated_at', 'id'], unique=False)
        batch_op.create_index('ix_scenarios_updated_at_id', ['updated_at', 'id'], unique=False)

    op.create_table('scenario_tags',
    sa.Column('scenario_id', sa.Integer(), nullable=False),
    sa.Column('tag', sa.String(length=64), nullable=False),
    sa.ForeignKeyConstraint(['scenario_id'], ['scenarios.id'], name=op.f('fk_scenario_tags_scenario_id_scenarios'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('scenario_id', 'tag', name=op.f('pk_scenario_tags'))
    )
    with op.batch_alter_table('scenario_tags', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_scenario_tags_tag'), ['tag'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('scenario_tags', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_scenario_tags_tag'))

    op.drop_table('scenario_tags')
    with op.batch_alter_table('scenarios', schema=None) as batch_op:
        batch_op.drop_index('ix_scenarios_updated_at_id')
        batch_op.drop_index('ix_scenarios_owner_updated_at_id')
        batch_op.drop_index('ix_scenarios_kind_updated_at_id')

    op.drop_table('scenarios')
    with op.batch_alter_table('scenario_revisions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_scenario_revisions_scenario_id'))

    op.drop_table('scenario_revisions')
    with op.batch_alter_table('audit_events', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_audit_events_target'))
        batch_op.drop_index(batch_op.f('ix_audit_events_at'))
        batch_op.drop_index(batch_op.f('ix_audit_events_actor'))

    op.drop_table('audit_events')
    with op.batch_alter_table('api_keys', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_api_keys_prefix'))

    op.drop_table('api_keys')
