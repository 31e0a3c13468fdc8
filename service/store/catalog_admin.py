"""Catalog writes: accelerators and prices. Prices are never edited in place; every change is audited
in the same transaction, and bumps the accelerator's version (optimistic concurrency)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from . import audit
from .models import PRECISION_COLUMNS, Accelerator, AcceleratorPrice

SPEC_FIELDS = (
    "name",
    "vendor",
    "kind",
    "memory_bytes",
    "memory_bandwidth_bytes_per_s",
    "interconnect_bandwidth_bytes_per_s",
    "tdp_watts",
    "scale_up_domain",
    "scale_out_bandwidth_bytes_per_s",
    "release_year",
    "source_specs",
    "notes",
)


# What a price row sells besides its price (migration 0009); a new row carries them over from the row it replaces
OFFER_FIELDS = (
    "accelerators_per_instance",
    "max_accelerators",
    "billing_increment_seconds",
    "minimum_billed_seconds",
    "startup_seconds",
    "slice_sizes",
    "covers",
    "interruptions_per_hour",
    "scale_out",
)


class PriceConflict(ValueError):
    """A new price may not start before the price it replaces."""


def snapshot(acc: Accelerator) -> dict[str, Any]:
    data = {f: getattr(acc, f) for f in ("id", *SPEC_FIELDS, "version")}
    data["peak_flops_per_s"] = {p: acc.peak(p) for p in PRECISION_COLUMNS}
    return data


def price_snapshot(p: AcceleratorPrice) -> dict[str, Any]:
    return {
        "id": p.id,
        "provider": p.provider,
        "instance_type": p.instance_type,
        "region": p.region,
        "pricing_model": p.pricing_model,
        "usd_per_hour": str(p.usd_per_hour),
        "effective_from": p.effective_from.isoformat(),
        "effective_to": p.effective_to.isoformat() if p.effective_to else None,
        "source": p.source,
        **{field: getattr(p, field) for field in OFFER_FIELDS},
    }


def _apply_specs(acc: Accelerator, data: dict[str, Any]) -> None:
    for field in SPEC_FIELDS:
        if field in data:
            setattr(acc, field, data[field])
    for precision, value in (data.get("peak_flops_per_s") or {}).items():
        setattr(acc, f"peak_{precision}_flops_per_s", value)


def _touch(acc: Accelerator) -> None:
    """Mark the accelerator changed: its version_id_col increments and its ETag moves."""
    acc.updated_at = dt.datetime.now(dt.UTC)


def add_accelerator(
    session: Session, data: dict[str, Any], *, actor: str, request_id: str | None
) -> Accelerator:
    acc = Accelerator(id=data["id"])
    target = f"accelerator:{acc.id}"
    with audit.change(
        session, actor=actor, action="accelerator.create", target=target, request_id=request_id
    ) as c:
        _apply_specs(acc, data)
        session.add(acc)
        session.flush()
        c.after = snapshot(acc)
    return acc


def patch_accelerator(
    session: Session, acc: Accelerator, data: dict[str, Any], *, actor: str, request_id: str | None
) -> Accelerator:
    with audit.change(
        session,
        actor=actor,
        action="accelerator.update",
        target=f"accelerator:{acc.id}",
        request_id=request_id,
        before=snapshot(acc),
    ) as c:
        _apply_specs(acc, data)
        _touch(acc)
        session.flush()  # raises StaleDataError if another writer got there first
        c.after = snapshot(acc)
    return acc


def _open_rows(session: Session, acc: Accelerator, provider: str, pricing_model: str, region: str | None):
    stmt = select(AcceleratorPrice).where(
        AcceleratorPrice.accelerator_id == acc.id,
        AcceleratorPrice.provider == provider,
        AcceleratorPrice.pricing_model == pricing_model,
        AcceleratorPrice.effective_to.is_(None),
    )
    if region is not None:
        stmt = stmt.where(AcceleratorPrice.region == region)
    return session.scalars(stmt).all()


def set_price(
    session: Session,
    acc: Accelerator,
    provider: str,
    data: dict[str, Any],
    *,
    actor: str,
    request_id: str | None,
) -> AcceleratorPrice:
    """Close the provider's open price(s) for this pricing model (and region, when given); open a new one."""
    pricing_model = data.get("pricing_model", "on-demand")
    starts = data.get("effective_from") or dt.date.today()
    previous = _open_rows(session, acc, provider, pricing_model, data.get("region"))
    for row in previous:
        if row.effective_from > starts:
            raise PriceConflict(
                f"effective_from {starts.isoformat()} is before the current price's start "
                f"{row.effective_from.isoformat()}"
            )
    with audit.change(
        session,
        actor=actor,
        action="price.set",
        target=f"accelerator:{acc.id}",
        request_id=request_id,
        before={"prices": [price_snapshot(r) for r in previous]},
    ) as c:
        for row in previous:
            row.effective_to = starts
        price = _new_price(provider, data, pricing_model, starts, actor, previous[0] if previous else None)
        acc.prices.append(price)  # keeps the loaded collection current for the response
        _touch(acc)
        session.flush()
        c.after = {
            "prices": [*(price_snapshot(r) for r in previous), price_snapshot(price)]
        }  # closed + opened
    return price


def _new_price(
    provider: str,
    data: dict[str, Any],
    pricing_model: str,
    starts: dt.date,
    actor: str,
    template: AcceleratorPrice | None,
) -> AcceleratorPrice:
    """The row a price change opens; unspecified details carry over from the row it replaces."""
    defaults = {"accelerators_per_instance": 1, "covers": "instance"}
    terms = {
        field: data[field] if field in data else getattr(template, field) if template else defaults.get(field)
        for field in OFFER_FIELDS
    }
    return AcceleratorPrice(
        provider=provider,
        instance_type=data.get("instance_type", template.instance_type if template else None),
        **terms,
        region=data.get("region", template.region if template else None),
        pricing_model=pricing_model,
        usd_per_hour=Decimal(str(data["usd_per_hour"])),
        as_of=data.get("as_of") or starts.isoformat(),
        effective_from=starts,
        source=data.get("source") or f"set by {actor}",
        created_by=actor,
    )


def delete_price(
    session: Session,
    acc: Accelerator,
    provider: str,
    *,
    pricing_model: str | None,
    actor: str,
    request_id: str | None,
) -> list[AcceleratorPrice]:
    """Close the provider's open prices (all pricing models unless one is named). Returns the closed rows."""
    stmt = select(AcceleratorPrice).where(
        AcceleratorPrice.accelerator_id == acc.id,
        AcceleratorPrice.provider == provider,
        AcceleratorPrice.effective_to.is_(None),
    )
    if pricing_model:
        stmt = stmt.where(AcceleratorPrice.pricing_model == pricing_model)
    rows = session.scalars(stmt).all()
    if not rows:
        return []
    with audit.change(
        session,
        actor=actor,
        action="price.delete",
        target=f"accelerator:{acc.id}",
        request_id=request_id,
        before={"prices": [price_snapshot(r) for r in rows]},
    ) as c:
        today = dt.date.today()
        for row in rows:
            row.effective_to = max(today, row.effective_from)
        _touch(acc)
        c.after = {"prices": [price_snapshot(r) for r in rows]}
    return list(rows)


def price_history(session: Session, acc: Accelerator) -> list[AcceleratorPrice]:
    return list(
        session.scalars(
            select(AcceleratorPrice)
            .where(AcceleratorPrice.accelerator_id == acc.id)
            .order_by(AcceleratorPrice.provider, AcceleratorPrice.effective_from, AcceleratorPrice.id)
        )
    )
