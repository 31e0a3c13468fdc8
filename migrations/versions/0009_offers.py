"""offers: what a price row sells — instance limit, billing increments, start-up, slice sizes, what the price covers

Issue 29 (plans you can buy). Each price row states `max_accelerators` (one order's limit; null = not stated),
`billing_increment_seconds`, `minimum_billed_seconds`, `startup_seconds`, `slice_sizes` (JSON list of valid counts
of a sliced part) and `covers` ("instance": the whole VM; "accelerator": the GPU alone, as GCP's GPU SKUs bill it).

Backfill: billing and start-up from the provider's published terms or its kind's default, slice sizes of the TPU
generations Google documents, `covers` "instance" (every seeded row prices the whole VM or TPU host; a row from the
gcp-billing reader, whose source says "VM billed apart", prices a GPU SKU alone). The values are a copy of service/engine/offers.py as of this revision,
with their sources in docs/formulas.md ("Offers"); a migration does not import the application.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

# (billing_increment_seconds, minimum_billed_seconds, startup_seconds): engine/offers.py PROVIDER_TERMS
PROVIDER_TERMS = {
    "aws": (1, 60, 600),
    "gcp": (1, 60, 600),
    "azure": (60, 60, 600),
    "lambda": (60, 60, 300),
    "runpod": (1, 0, 300),
}
HYPERSCALERS = ("aws", "gcp", "azure", "oracle", "oci", "ibm", "alibaba")
HYPERSCALER_TERMS = (1, 60, 600)
NEOCLOUD_TERMS = (60, 60, 300)
SLICE_SIZES = {
    "google-tpu-v5e": [1, 4, 8, 16, 32, 64, 128, 256],
    "google-tpu-v6e": [1, 4, 8, 16, 32, 64, 128, 256],
    "google-tpu-v5p": [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 6144],
}

prices = sa.table(
    "accelerator_prices",
    sa.column("id", sa.Integer),
    sa.column("accelerator_id", sa.String),
    sa.column("provider", sa.String),
    sa.column("source", sa.Text),
    sa.column("billing_increment_seconds", sa.Integer),
    sa.column("minimum_billed_seconds", sa.Integer),
    sa.column("startup_seconds", sa.Integer),
    sa.column("slice_sizes", sa.JSON),
    sa.column("covers", sa.String),
)


def upgrade() -> None:
    with op.batch_alter_table("accelerator_prices") as batch_op:
        batch_op.add_column(sa.Column("max_accelerators", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("billing_increment_seconds", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("minimum_billed_seconds", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("startup_seconds", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("slice_sizes", sa.JSON(), nullable=True))
        batch_op.add_column(
            sa.Column("covers", sa.String(length=16), server_default="instance", nullable=False)
        )
    _backfill(op.get_bind())


def _backfill(bind) -> None:
    rows = bind.execute(sa.select(prices.c.id, prices.c.accelerator_id, prices.c.provider, prices.c.source)).all()
    for row_id, accelerator_id, provider, source in rows:
        key = (provider or "").lower()
        terms = PROVIDER_TERMS.get(key) or (HYPERSCALER_TERMS if key in HYPERSCALERS else NEOCLOUD_TERMS)
        values = {
            "billing_increment_seconds": terms[0],
            "minimum_billed_seconds": terms[1],
            "startup_seconds": terms[2],
            # a GPU SKU of the Cloud Billing Catalog prices the GPU alone (the VM is billed apart)
            "covers": "accelerator" if "VM billed apart" in (source or "") else "instance",
        }
        if accelerator_id in SLICE_SIZES:
            values["slice_sizes"] = list(SLICE_SIZES[accelerator_id])
        bind.execute(sa.update(prices).where(prices.c.id == row_id).values(**values))


def downgrade() -> None:
    with op.batch_alter_table("accelerator_prices") as batch_op:
        batch_op.drop_column("covers")
        batch_op.drop_column("slice_sizes")
        batch_op.drop_column("startup_seconds")
        batch_op.drop_column("minimum_billed_seconds")
        batch_op.drop_column("billing_increment_seconds")
        batch_op.drop_column("max_accelerators")
