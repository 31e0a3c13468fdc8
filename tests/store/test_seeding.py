"""Seeding is idempotent, keeps price history and never overwrites what an admin changed."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from scalecost.store.models import Accelerator, AcceleratorPrice
from scalecost.store.seeding import effective_from_of, seed_catalog
from sqlalchemy import select


def test_effective_from_parses_the_catalog_period_labels():
    assert effective_from_of("2025-H2") == dt.date(2025, 7, 1)
    assert effective_from_of("2024-H1-2025") == dt.date(2024, 1, 1)
    assert effective_from_of("2024-2025") == dt.date(2024, 1, 1)
    assert effective_from_of("2026-04") == dt.date(2026, 4, 1)
    assert effective_from_of("2026-11-30") == dt.date(2026, 11, 30)  # a catalog commit's day


def test_reseeding_adds_nothing(app):
    with app.extensions["scalecost.db"].transaction() as session:
        report = seed_catalog(session)
    assert report.accelerators_added == 0 and report.prices_added == 0
    assert report.accelerators_kept >= 25 and report.prices_kept >= 40


def test_older_price_of_the_same_offer_is_closed_by_the_newer(app):
    with app.extensions["scalecost.db"].transaction() as session:
        rows = session.scalars(
            select(AcceleratorPrice)
            .where(
                AcceleratorPrice.accelerator_id == "nvidia-h100-sxm-80gb", AcceleratorPrice.provider == "aws"
            )
            .order_by(AcceleratorPrice.effective_from)
        ).all()
    assert [r.usd_per_hour for r in rows] == [Decimal("12.29"), Decimal("6.88"), Decimal("6.88")]
    assert rows[0].effective_to == rows[1].effective_from == dt.date(2025, 7, 1)
    assert rows[1].effective_to == rows[2].effective_from == dt.date(2026, 8, 22)
    assert rows[2].effective_to is None


def test_seeding_never_overwrites_admin_changes(app):
    database = app.extensions["scalecost.db"]
    with database.transaction() as session:
        acc = session.get(Accelerator, "nvidia-t4")
        acc.name = "T4 (renamed by admin)"
        price = session.scalars(
            select(AcceleratorPrice).where(
                AcceleratorPrice.accelerator_id == "nvidia-t4", AcceleratorPrice.effective_to.is_(None)
            )
        ).one()
        price.effective_to = dt.date(2026, 3, 1)
        session.add(
            AcceleratorPrice(
                accelerator_id="nvidia-t4",
                provider="aws",
                instance_type="g4dn.xlarge",
                region="us-east-1",
                usd_per_hour=Decimal("0.40"),
                effective_from=dt.date(2026, 3, 1),
                created_by="admin",
            )
        )
    with database.transaction() as session:
        seed_catalog(session)
    with database.transaction() as session:
        assert session.get(Accelerator, "nvidia-t4").name == "T4 (renamed by admin)"
        open_rows = session.scalars(
            select(AcceleratorPrice).where(
                AcceleratorPrice.accelerator_id == "nvidia-t4", AcceleratorPrice.effective_to.is_(None)
            )
        ).all()
        assert [r.usd_per_hour for r in open_rows] == [Decimal("0.40")]
