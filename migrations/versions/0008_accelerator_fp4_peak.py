"""accelerator fp4 peak: the dense FP4 tensor rate (NVFP4 on NVIDIA Blackwell, MXFP4 on AMD CDNA 4)

Issue 11 (FP4 weights and training precision on Blackwell): a column beside the other dense peaks. Nullable: null means
the part has no FP4 tensor rate (or none is published); `scalecost catalog seed` fills it from
service/store/seed/accelerator_fp4.csv (each value with its source) where an admin has not.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("accelerators") as batch_op:
        batch_op.add_column(sa.Column("peak_fp4_flops_per_s", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("accelerators") as batch_op:
        batch_op.drop_column("peak_fp4_flops_per_s")
