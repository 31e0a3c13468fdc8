"""Price imports, store side: the reads a plan needs (open prices, earlier imports) and the writes an applied
import makes. Every price change closes the open row (effective_to) and opens a new one carrying the import's
id, with its audit event in the same transaction (audit.change), and bumps the accelerator's version, as an
admin's PUT does. The caller commits once, after the last change: all of an import or none of it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from . import audit
from .catalog_admin import price_snapshot
from .models import Accelerator, AcceleratorPrice, PriceImport


def open_prices(
    session: Session, *, providers: Iterable[str] | None = None, accelerator_ids: Iterable[str] | None = None
) -> list[AcceleratorPrice]:
    """Current rows (no effective_to) of these providers and/or accelerators."""
    stmt = select(AcceleratorPrice).where(AcceleratorPrice.effective_to.is_(None))
    if providers is not None:
        stmt = stmt.where(AcceleratorPrice.provider.in_(sorted(set(providers))))
    if accelerator_ids is not None:
        stmt = stmt.where(AcceleratorPrice.accelerator_id.in_(sorted(set(accelerator_ids))))
    return list(session.scalars(stmt.order_by(AcceleratorPrice.id)))


def accelerators(session: Session, ids: Iterable[str]) -> dict[str, Accelerator]:
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    return {a.id: a for a in session.scalars(select(Accelerator).where(Accelerator.id.in_(wanted)))}


def accelerator_ids(session: Session) -> set[str]:
    return set(session.scalars(select(Accelerator.id)))


def earlier_import(session: Session, digest: str) -> PriceImport | None:
    """The latest applied import of exactly these files, if any."""
    return session.scalars(
        select(PriceImport).where(PriceImport.digest == digest).order_by(PriceImport.id.desc()).limit(1)
    ).first()


def get(session: Session, import_id: int) -> PriceImport | None:
    return session.get(PriceImport, import_id)


def recent(session: Session, limit: int = 50) -> Sequence[PriceImport]:
    return session.scalars(select(PriceImport).order_by(PriceImport.id.desc()).limit(limit)).all()


def start(
    session: Session,
    *,
    source: str,
    files: list[dict[str, Any]],
    digest: str,
    effective_from: dt.date | None,
    forced: bool,
    actor: str,
    request_id: str | None,
) -> PriceImport:
    """The import's row, flushed so that its id can mark the prices and audit events that follow."""
    record = PriceImport(
        source=source,
        files=files,
        digest=digest,
        effective_from=effective_from,
        forced=forced,
        actor=actor,
        request_id=request_id,
        result={},
    )
    session.add(record)
    session.flush()
    return record


def change_price(
    session: Session,
    acc: Accelerator,
    old: AcceleratorPrice | None,
    new: dict[str, Any],
    *,
    record: PriceImport,
    request_id: str | None,
) -> AcceleratorPrice:
    """Close `old` (when given) on the new row's first day and open the new row: one audit event."""
    starts: dt.date = new["effective_from"]
    before = {"import_id": record.id, "prices": [price_snapshot(old)] if old is not None else []}
    with audit.change(
        session,
        actor=record.actor,
        action="price.import",
        target=f"accelerator:{acc.id}",
        request_id=request_id,
        before=before,
    ) as change:
        if old is not None:
            old.effective_to = starts
        price = AcceleratorPrice(
            provider=new["provider"],
            instance_type=new.get("instance_type"),
            accelerators_per_instance=new.get("accelerators_per_instance", 1),
            region=new.get("region"),
            pricing_model=new["pricing_model"],
            usd_per_hour=Decimal(new["usd_per_hour"]),
            as_of=new.get("as_of") or starts.isoformat(),
            effective_from=starts,
            source=new.get("source"),
            created_by=record.actor,
            import_id=record.id,
        )
        acc.prices.append(price)
        acc.updated_at = dt.datetime.now(
            dt.UTC
        )  # the version moves: concurrent writers of this accelerator fail
        session.flush()
        change.after = {
            "import_id": record.id,
            "prices": [*([price_snapshot(old)] if old is not None else []), price_snapshot(price)],
        }
    return price


def stale_prices(session: Session, started_before: dt.date) -> list[AcceleratorPrice]:
    """Current prices whose period began before `started_before`, oldest first."""
    return list(
        session.scalars(
            select(AcceleratorPrice)
            .where(AcceleratorPrice.effective_to.is_(None), AcceleratorPrice.effective_from < started_before)
            .order_by(AcceleratorPrice.effective_from, AcceleratorPrice.accelerator_id, AcceleratorPrice.id)
        )
    )
