"""Accelerator catalog repository (read side)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session, noload

from . import paging
from .models import Accelerator, AcceleratorPrice


class CatalogRepository:
    def __init__(self, session: Session):
        self.session = session

    def query(
        self, vendor: str | None = None, kind: str | None = None, min_memory_bytes: int | None = None
    ) -> Select[Any]:
        stmt = select(Accelerator)
        if vendor:
            stmt = stmt.where(func.lower(Accelerator.vendor) == vendor.lower())
        if kind:
            stmt = stmt.where(Accelerator.kind == kind)
        if min_memory_bytes is not None:
            stmt = stmt.where(Accelerator.memory_bytes >= min_memory_bytes)
        return stmt.order_by(Accelerator.id)

    def page(self, stmt: Select, offset: int, limit: int) -> tuple[Sequence[Accelerator], int]:
        return paging.page(self.session, stmt, offset, limit)

    def listing_page(self, stmt: Select, offset: int, limit: int) -> tuple[Sequence[Accelerator], int]:
        """A page of accelerators without their price rows (history included, they grow with every import):
        `cheapest_current` gives a listing its prices."""
        return paging.page(self.session, stmt.options(noload(Accelerator.prices)), offset, limit)

    def cheapest_current(
        self, accelerator_ids: Sequence[str]
    ) -> tuple[dict[str, list[AcceleratorPrice]], dict[str, int]]:
        """Per accelerator, the cheapest open price row of each (provider, pricing model, covers), and how many
        open rows it has. Two statements whose rows are bounded by the providers, not by regions, instance
        types or history (a window function: SQLite >= 3.25 and PostgreSQL)."""
        open_rows = [
            AcceleratorPrice.accelerator_id.in_(list(accelerator_ids)),
            AcceleratorPrice.effective_to.is_(None),
        ]
        rank = (
            func.row_number()
            .over(
                partition_by=(
                    AcceleratorPrice.accelerator_id,
                    AcceleratorPrice.provider,
                    AcceleratorPrice.pricing_model,
                    AcceleratorPrice.covers,
                ),
                order_by=(AcceleratorPrice.usd_per_hour, AcceleratorPrice.id),
            )
            .label("rank")
        )
        ranked = select(AcceleratorPrice.id, rank).where(*open_rows).subquery()
        rows = self.session.scalars(
            select(AcceleratorPrice)
            .join(ranked, ranked.c.id == AcceleratorPrice.id)
            .where(ranked.c.rank == 1)
            .order_by(
                AcceleratorPrice.usd_per_hour, AcceleratorPrice.provider, AcceleratorPrice.pricing_model
            )
        ).all()
        cheapest: dict[str, list[AcceleratorPrice]] = {a: [] for a in accelerator_ids}
        for row in rows:
            cheapest[row.accelerator_id].append(row)
        totals = self.session.execute(
            select(AcceleratorPrice.accelerator_id, func.count())
            .where(*open_rows)
            .group_by(AcceleratorPrice.accelerator_id)
        ).all()
        return cheapest, {a: n for a, n in totals}

    def get(self, accelerator_id: str) -> Accelerator | None:
        return self.session.get(Accelerator, accelerator_id)

    def fingerprint(self) -> tuple:
        """Changes whenever an accelerator or a price row is added, removed or changed (versions bump)."""
        acc = self.session.execute(
            select(func.count(), func.coalesce(func.sum(Accelerator.version), 0))
        ).one()
        prices = self.session.execute(
            select(func.count(), func.max(AcceleratorPrice.id), func.count(AcceleratorPrice.effective_to))
        ).one()
        return (*acc, *prices)

    def all(self) -> Sequence[Accelerator]:
        return self.session.scalars(select(Accelerator).order_by(Accelerator.id)).all()


def prices_on(acc: Accelerator, day: dt.date | None = None) -> list[AcceleratorPrice]:
    """Prices in force on `day` (today's open rows when None)."""
    if day is None:
        return [p for p in acc.prices if p.effective_to is None]
    return [p for p in acc.prices if p.active_on(day)]


def default_price(
    acc: Accelerator, current: Sequence[AcceleratorPrice] | None = None
) -> AcceleratorPrice | None:
    """Lowest current on-demand price across providers (of a whole instance: a GPU-only SKU is no such price),
    among `current` when given (a listing's cheapest rows hold it), else the accelerator's open rows."""
    rows = [
        p
        for p in (prices_on(acc) if current is None else current)
        if p.pricing_model == "on-demand" and p.covers != "accelerator"
    ]
    return min(rows, key=lambda p: p.usd_per_hour) if rows else None
