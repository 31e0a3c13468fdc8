"""accelerator fabric: the scale-up domain size and per-device scale-out network of the systems a part is built into

Issue 11 item 3: a property of the system, not of the chip's release year (GB200 NVL72 puts 72 GPUs in one NVLink
domain; a PCIe workstation card has no training-cluster network). Nullable: the engine's defaults apply; `scalecost
catalog seed` fills them from service/store/seed/accelerator_fabric.csv (with sources) where an admin has not.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("accelerators") as batch_op:
        batch_op.add_column(sa.Column("scale_up_domain", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("scale_out_bandwidth_bytes_per_s", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("accelerators") as batch_op:
        batch_op.drop_column("scale_out_bandwidth_bytes_per_s")
        batch_op.drop_column("scale_up_domain")
