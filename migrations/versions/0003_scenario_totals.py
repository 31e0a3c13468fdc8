"""scenario totals: per-kind scenario counts for listing totals without a full-table count

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "scenario_totals",
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("scenarios", sa.BigInteger(), server_default="0", nullable=False),
        sa.PrimaryKeyConstraint("kind", name=op.f("pk_scenario_totals")),
    )
    # start from the rows already there
    op.execute(
        "INSERT INTO scenario_totals (kind, scenarios) SELECT kind, count(*) FROM scenarios GROUP BY kind"
    )


def downgrade() -> None:
    op.drop_table("scenario_totals")
