"""Accelerator catalog repository (read side)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

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


def default_price(acc: Accelerator) -> AcceleratorPrice | None:
    """Lowest current on-demand price across providers (of a whole instance: a GPU-only SKU is no such price)."""
    rows = [p for p in prices_on(acc) if p.pricing_model == "on-demand" and p.covers != "accelerator"]
    return min(rows, key=lambda p: p.usd_per_hour) if rows else None
