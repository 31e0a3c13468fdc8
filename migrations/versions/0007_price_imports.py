"""price imports: the imports themselves, the import that opened each price row, and each saved scenario's cost
at today's prices

price_imports holds one row per applied import (scalecost prices import, POST /v1/price-imports): its files and
their digest, the diff it applied and the scenarios it moved. accelerator_prices.import_id names the import
that opened a row (null: an admin's or the seed's), which tells an import which prices an admin set by hand.

scenario_costs keeps, per saved scenario whose price can move, the (accelerator, provider) its price came from,
the price and headline cost when saved, and both at today's prices (usecases/price_moves.py). It is filled here
from the scenarios already saved: the price and the headline cost they recorded, unchanged so far.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from __future__ import annotations

import datetime as dt
import json

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "price_imports",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("source", sa.String(length=32), nullable=False),
        sa.Column("files", sa.JSON(), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("effective_from", sa.Date(), nullable=True),
        sa.Column("forced", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("changes", sa.Integer(), server_default="0", nullable=False),
        sa.Column("result", sa.JSON(), nullable=False),
        sa.Column("actor", sa.String(length=128), nullable=False),
        sa.Column("request_id", sa.String(length=128), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_price_imports")),
        sqlite_autoincrement=True,
    )
    op.create_index(op.f("ix_price_imports_digest"), "price_imports", ["digest"], unique=False)
    op.add_column("accelerator_prices", sa.Column("import_id", sa.Integer(), nullable=True))
    op.create_index(op.f("ix_accelerator_prices_import_id"), "accelerator_prices", ["import_id"], unique=False)
    op.create_table(
        "scenario_costs",
        sa.Column("scenario_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("scenario_version", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("accelerator_id", sa.String(length=64), nullable=False),
        sa.Column("provider", sa.String(length=64), nullable=False),
        sa.Column("saved_usd_per_hour", sa.Float(), nullable=False),
        sa.Column("saved_usd", sa.Float(), nullable=False),
        sa.Column("current_usd_per_hour", sa.Float(), nullable=True),
        sa.Column("current_usd", sa.Float(), nullable=True),
        sa.Column("change_percent", sa.Float(), nullable=True),
        sa.Column("abs_change_percent", sa.Float(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["scenario_id"],
            ["scenarios.id"],
            name=op.f("fk_scenario_costs_scenario_id_scenarios"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("scenario_id", name=op.f("pk_scenario_costs")),
    )
    op.create_index(
        "ix_scenario_costs_accelerator_provider", "scenario_costs", ["accelerator_id", "provider"], unique=False
    )
    op.create_index(
        "ix_scenario_costs_abs_change_percent", "scenario_costs", ["abs_change_percent"], unique=False
    )
    _backfill()


def _json(value):
    return json.loads(value) if isinstance(value, str) else (value or {})


def _cost_row(scenario_id, version, kind, request, prices, summary, now):
    """The rule of service/store/scenario_costs.row_for, frozen here as it stood at this revision."""
    request, prices, summary = _json(request), _json(prices), _json(summary)
    cost = request.get("cost") or {}
    if cost.get("usd_per_accelerator_hour") is not None or cost.get("as_of"):
        return None
    usd = prices.get("usd_per_accelerator_hour")
    headline = summary.get("total_usd") if kind == "training" else summary.get("usd_per_hour")
    accelerator = (request.get("hardware") or {}).get("accelerator")
    if not isinstance(accelerator, str) or not usd or headline is None or usd <= 0:
        return None
    return {
        "scenario_id": scenario_id,
        "scenario_version": version,
        "kind": kind,
        "accelerator_id": accelerator,
        "provider": str(cost.get("provider") or "").lower(),
        "saved_usd_per_hour": float(usd),
        "saved_usd": float(headline),
        "current_usd_per_hour": float(usd),
        "current_usd": float(headline),
        "change_percent": 0.0,
        "abs_change_percent": 0.0,
        "updated_at": now,
    }


def _backfill(batch: int = 1000) -> None:
    bind = op.get_bind()
    costs = sa.table(
        "scenario_costs",
        *(
            sa.column(c)
            for c in (
                "scenario_id", "scenario_version", "kind", "accelerator_id", "provider", "saved_usd_per_hour",
                "saved_usd", "current_usd_per_hour", "current_usd", "change_percent", "abs_change_percent",
                "updated_at",
            )
        ),
    )
    now = dt.datetime.now(dt.UTC)
    last = 0
    while True:
        rows = bind.execute(
            sa.text(
                "SELECT id, version, kind, request, prices, summary FROM scenarios WHERE id > :last "
                "ORDER BY id LIMIT :batch"
            ),
            {"last": last, "batch": batch},
        ).all()
        if not rows:
            return
        found = [r for r in (_cost_row(*row, now) for row in rows) if r is not None]
        if found:
            bind.execute(costs.insert(), found)
        last = rows[-1][0]


def downgrade() -> None:
    op.drop_index("ix_scenario_costs_abs_change_percent", table_name="scenario_costs")
    op.drop_index("ix_scenario_costs_accelerator_provider", table_name="scenario_costs")
    op.drop_table("scenario_costs")
    # SQLite rebuilds the table to drop a column: keep its AUTOINCREMENT (migration 0004)
    with op.batch_alter_table("accelerator_prices", table_kwargs={"sqlite_autoincrement": True}) as batch:
        batch.drop_index(batch.f("ix_accelerator_prices_import_id"))
        batch.drop_column("import_id")
    op.drop_index(op.f("ix_price_imports_digest"), table_name="price_imports")
    op.drop_table("price_imports")
