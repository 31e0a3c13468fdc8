"""accelerator catalog

Revision ID: 0001
Revises: 
Create Date: 2026-11-29
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('accelerators',
    sa.Column('id', sa.String(length=64), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('vendor', sa.String(length=64), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('memory_bytes', sa.BigInteger(), nullable=False),
    sa.Column('memory_bandwidth_bytes_per_s', sa.Float(), nullable=False),
    sa.Column('peak_fp32_flops_per_s', sa.Float(), nullable=True),
    sa.Column('peak_tf32_flops_per_s', sa.Float(), nullable=True),
    sa.Column('peak_bf16_flops_per_s', sa.Float(), nullable=True),
    sa.Column('peak_fp16_flops_per_s', sa.Float(), nullable=True),
    sa.Column('peak_fp8_flops_per_s', sa.Float(), nullable=True),
    sa.Column('peak_int8_flops_per_s', sa.Float(), nullable=True),
    sa.Column('peak_int4_flops_per_s', sa.Float(), nullable=True),
    sa.Column('interconnect_bandwidth_bytes_per_s', sa.Float(), nullable=True),
    sa.Column('tdp_watts', sa.Float(), nullable=True),
    sa.Column('release_year', sa.Integer(), nullable=True),
    sa.Column('source_specs', sa.Text(), nullable=True),
    sa.Column('notes', sa.Text(), nullable=True),
    sa.Column('version', sa.Integer(), server_default='1', nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_accelerators'))
    )
    with op.batch_alter_table('accelerators', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_accelerators_kind'), ['kind'], unique=False)
        batch_op.create_index(batch_op.f('ix_accelerators_memory_bytes'), ['memory_bytes'], unique=False)
        batch_op.create_index(batch_op.f('ix_accelerators_vendor'), ['vendor'], unique=False)

    op.create_table('accelerator_prices',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('accelerator_id', sa.String(length=64), nullable=False),
    sa.Column('provider', sa.String(length=64), nullable=False),
    sa.Column('instance_type', sa.String(length=128), nullable=True),
    sa.Column('accelerators_per_instance', sa.Integer(), server_default='1', nullable=False),
    sa.Column('region', sa.String(length=64), nullable=True),
    sa.Column('pricing_model', sa.String(length=32), server_default='on-demand', nullable=False),
    sa.Column('usd_per_hour', sa.Numeric(precision=14, scale=6), nullable=False),
    sa.Column('as_of', sa.String(length=32), nullable=True),
    sa.Column('effective_from', sa.Date(), nullable=False),
    sa.Column('effective_to', sa.Date(), nullable=True),
    sa.Column('source', sa.Text(), nullable=True),
    sa.Column('created_by', sa.String(length=128), server_default='seed', nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['accelerator_id'], ['accelerators.id'], name=op.f('fk_accelerator_prices_accelerator_id_accelerators'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_accelerator_prices'))
    )
    with op.batch_alter_table('accelerator_prices', schema=None) as batch_op:
        batch_op.create_index('ix_accelerator_prices_lookup', ['accelerator_id', 'provider', 'effective_to'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('accelerator_prices', schema=None) as batch_op:
        batch_op.drop_index('ix_accelerator_prices_lookup')

    op.drop_table('accelerator_prices')
    with op.batch_alter_table('accelerators', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_accelerators_vendor'))
        batch_op.drop_index(batch_op.f('ix_accelerators_memory_bytes'))
        batch_op.drop_index(batch_op.f('ix_accelerators_kind'))

    op.drop_table('accelerators')
