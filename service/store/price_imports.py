"""Price imports, store side: the reads a plan needs (open prices, earlier imports) and the writes an applied
import makes. Every price change closes the open row (effective_to) and opens a new one carrying the import's
id, with its audit event in the same transaction, and the accelerator's version moves, as an admin's PUT does.
`change_prices` writes many changes in a constant number of statements (an import's time grows linearly with
its rows). The caller commits: once after the last change (the API: all of an import or none of it), or after
each batch (the CLI, usecases/price_imports.run's `commit`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any, cast

from sqlalchemy import Table, bindparam, func, insert, select
from sqlalchemy.orm import Session, lazyload
from sqlalchemy.orm.attributes import set_committed_value

from . import audit
from .catalog_admin import price_snapshot
from .models import Accelerator, AcceleratorPrice, PriceImport


def open_prices(
    session: Session,
    *,
    providers: Iterable[str] | None = None,
    accelerator_ids: Iterable[str] | None = None,
    other_providers: Iterable[str] | None = None,
) -> list[AcceleratorPrice]:
    """Current rows (no effective_to) of these providers and/or accelerators; `other_providers`: leave out
    these providers' rows (a caller that holds them already)."""
    stmt = select(AcceleratorPrice).where(AcceleratorPrice.effective_to.is_(None))
    if providers is not None:
        stmt = stmt.where(AcceleratorPrice.provider.in_(sorted(set(providers))))
    if accelerator_ids is not None:
        stmt = stmt.where(AcceleratorPrice.accelerator_id.in_(sorted(set(accelerator_ids))))
    if other_providers is not None:
        stmt = stmt.where(AcceleratorPrice.provider.not_in(sorted(set(other_providers))))
    return list(session.scalars(stmt.order_by(AcceleratorPrice.id)))


def accelerators(session: Session, ids: Iterable[str]) -> dict[str, Accelerator]:
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    stmt = select(Accelerator).where(Accelerator.id.in_(wanted)).options(lazyload(Accelerator.prices))
    return {a.id: a for a in session.scalars(stmt)}  # not their whole price history (the mapping's selectin)


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


def change_prices(
    session: Session,
    changes: Sequence[tuple[str, AcceleratorPrice | None, dict[str, Any]]],
    *,
    record: PriceImport,
    request_id: str | None,
) -> int:
    """Many changes in a constant number of statements: per change
    (accelerator id, the open row to close or None, the new row) the old row is closed on the new row's first
    day, the new row opened with the import's id, and one audit event written with both snapshots.

    First each accelerator's version moves once (one UPDATE … WHERE version = ? each, flushed): a concurrent
    writer of one of them fails here (StaleDataError), before anything is written. Then one executemany closes
    the old rows, one inserts the new ones (their ids returned in order) and one inserts the audit events. The
    loaded old rows get their effective_to without being marked dirty; the accelerators' `prices` collections
    are expired. Returns the number of changes."""
    if not changes:
        return 0
    accs = accelerators(session, {a for a, _, _ in changes})
    now = dt.datetime.now(dt.UTC)
    for acc in accs.values():
        acc.updated_at = now  # the version moves: concurrent writers of this accelerator fail
    session.flush()
    table = cast(Table, AcceleratorPrice.__table__)
    closes = [{"b_id": old.id, "b_to": new["effective_from"]} for _, old, new in changes if old is not None]
    if closes:
        session.execute(
            table.update().where(table.c.id == bindparam("b_id")).values(effective_to=bindparam("b_to")),
            closes,
        )
    rows = [_price_row(accelerator_id, new, record) for accelerator_id, _, new in changes]
    ids = _insert_prices(session, table, rows, record.id)
    events = []
    for (accelerator_id, old, new), row in zip(changes, rows, strict=True):
        price_id = ids[_key(row)]
        before = [price_snapshot(old)] if old is not None else []
        if old is not None:
            set_committed_value(old, "effective_to", new["effective_from"])
        after = [*([price_snapshot(old)] if old is not None else []), _snapshot(price_id, row)]
        events.append(
            {
                "actor": record.actor,
                "action": "price.import",
                "target": f"accelerator:{accelerator_id}",
                "before": {"import_id": record.id, "prices": before},
                "after": {"import_id": record.id, "prices": after},
                "request_id": request_id,
            }
        )
    audit.record_many(session, events)
    for acc in accs.values():
        session.expire(acc, ["prices"])
    return len(changes)


def _key(row: Any) -> tuple[str, str, str, str, str]:
    return (
        row["accelerator_id"],
        row["provider"],
        row["instance_type"] or "",
        row["region"] or "",
        row["pricing_model"],
    )


def _insert_prices(
    session: Session, table: Table, rows: list[dict[str, Any]], import_id: int
) -> dict[tuple[str, str, str, str, str], int]:
    """Insert the rows in one executemany; their ids by offer. INSERT … RETURNING in parameter order would
    fall back to one statement per row where the table's ids are AUTOINCREMENT (SQLite), so the ids are read
    back instead: the import's rows above the largest id before the insert (one row per offer per import)."""
    above = session.scalar(select(func.max(table.c.id))) or 0
    session.execute(insert(table), rows)
    found = session.execute(
        select(
            table.c.id,
            table.c.accelerator_id,
            table.c.provider,
            table.c.instance_type,
            table.c.region,
            table.c.pricing_model,
        ).where(table.c.id > above, table.c.import_id == import_id)
    ).mappings()
    return {_key(r): r["id"] for r in found}


def _price_row(accelerator_id: str, new: dict[str, Any], record: PriceImport) -> dict[str, Any]:
    starts: dt.date = new["effective_from"]
    return {
        "accelerator_id": accelerator_id,
        "provider": new["provider"],
        "instance_type": new.get("instance_type"),
        "accelerators_per_instance": new.get("accelerators_per_instance", 1),
        "region": new.get("region"),
        "pricing_model": new["pricing_model"],
        "usd_per_hour": Decimal(new["usd_per_hour"]),
        "as_of": new.get("as_of") or starts.isoformat(),
        "effective_from": starts,
        "effective_to": None,
        "source": new.get("source"),
        "created_by": record.actor,
        "created_at": dt.datetime.now(dt.UTC),
        "import_id": record.id,
        "covers": new.get("covers", "instance"),
        "max_accelerators": new.get("max_accelerators"),
        "billing_increment_seconds": new.get("billing_increment_seconds"),
        "minimum_billed_seconds": new.get("minimum_billed_seconds"),
        "startup_seconds": new.get("startup_seconds"),
        "slice_sizes": new.get("slice_sizes"),
        "interruptions_per_hour": new.get("interruptions_per_hour"),
        "scale_out": new.get("scale_out"),
    }


def _snapshot(price_id: int, row: dict[str, Any]) -> dict[str, Any]:
    """price_snapshot of the row just inserted (the same keys and spelling)."""
    return {
        "id": price_id,
        "provider": row["provider"],
        "instance_type": row["instance_type"],
        "region": row["region"],
        "pricing_model": row["pricing_model"],
        "usd_per_hour": str(row["usd_per_hour"]),
        "effective_from": row["effective_from"].isoformat(),
        "effective_to": None,
        "source": row["source"],
    }


def stale_prices(session: Session, started_before: dt.date) -> list[AcceleratorPrice]:
    """Current prices whose period began before `started_before`, oldest first."""
    return list(
        session.scalars(
            select(AcceleratorPrice)
            .where(AcceleratorPrice.effective_to.is_(None), AcceleratorPrice.effective_from < started_before)
            .order_by(AcceleratorPrice.effective_from, AcceleratorPrice.accelerator_id, AcceleratorPrice.id)
        )
    )
