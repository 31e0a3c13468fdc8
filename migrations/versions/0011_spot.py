"""spot: evictions per instance-hour and scale-out networks on price rows

Issue 29 §3 (spot and preemptible capacity). Each price row states `interruptions_per_hour`: how often the provider
reclaims one instance of a spot offer (null on rows of other pricing models, and where an admin clears it: the
engine then uses the provider's documented default for spot rows).

Each row also states `scale_out`: whether a scale-out network (EFA, InfiniBand, GPUDirect-TCPX) joins its instances
into one job (null = the provider's documented default, engine/offers.py SCALE_OUT: no backfill, so that a changed
default reaches every row that does not state its own).

Backfill: spot rows get their provider's published rate or the documented default. The values are a copy of
service/engine/offers.py (SPOT_INTERRUPTIONS_PER_HOUR) as of this revision, with their sources in docs/formulas.md
("Spot interruptions"); a migration does not import the application.

down_revision "0010" (calibration profiles): the two branches were re-chained when both landed.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

# evictions per instance-hour: engine/offers.py SPOT_INTERRUPTIONS_PER_HOUR and its default
SPOT_INTERRUPTIONS_PER_HOUR = {"aws": 0.20 / 730.0, "azure": 0.20 / 730.0, "gcp": 0.15 / 24.0}
DEFAULT_SPOT_INTERRUPTIONS_PER_HOUR = 0.15 / 24.0

prices = sa.table(
    "accelerator_prices",
    sa.column("id", sa.Integer),
    sa.column("provider", sa.String),
    sa.column("pricing_model", sa.String),
    sa.column("interruptions_per_hour", sa.Float),
)


def upgrade() -> None:
    with op.batch_alter_table("accelerator_prices") as batch_op:
        batch_op.add_column(sa.Column("interruptions_per_hour", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("scale_out", sa.Boolean(), nullable=True))
    bind = op.get_bind()
    rows = bind.execute(
        sa.select(prices.c.id, prices.c.provider).where(prices.c.pricing_model == "spot")
    ).all()
    for row_id, provider in rows:
        rate = SPOT_INTERRUPTIONS_PER_HOUR.get((provider or "").lower(), DEFAULT_SPOT_INTERRUPTIONS_PER_HOUR)
        bind.execute(sa.update(prices).where(prices.c.id == row_id).values(interruptions_per_hour=rate))


def downgrade() -> None:
    with op.batch_alter_table("accelerator_prices") as batch_op:
        batch_op.drop_column("scale_out")
        batch_op.drop_column("interruptions_per_hour")
