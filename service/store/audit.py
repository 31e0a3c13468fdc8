"""Append-only audit events, written inside the caller's transaction."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Select, Table, insert, select
from sqlalchemy.orm import Session

from . import paging
from .models import AuditEvent


def record(
    session: Session,
    *,
    actor: str,
    action: str,
    target: str,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    request_id: str | None,
) -> AuditEvent:
    event = AuditEvent(
        actor=actor, action=action, target=target, before=before, after=after, request_id=request_id
    )
    session.add(event)
    return event


def record_many(session: Session, events: Sequence[dict[str, Any]]) -> None:
    """Many events in one executemany (a bulk change's one event per change): each a dict of `record`'s
    keywords. Their ids follow the order given."""
    if events:
        table = cast(Table, AuditEvent.__table__)
        session.execute(insert(table), list(events))  # Core: no ORM work per row


@dataclass
class Change:
    """What an audited write records: the state before (given) and after (set by the body)."""

    before: dict[str, Any] | None
    after: dict[str, Any] | None = None


@contextmanager
def change(
    session: Session,
    *,
    actor: str,
    action: str,
    target: str,
    request_id: str | None,
    before: dict[str, Any] | None = None,
) -> Iterator[Change]:
    """One audited write in one gesture (Balrog's idea): who, on which version, and the history row.

    The body changes rows and sets `change.after`. On leaving, the change is flushed first, so a concurrent
    writer's version check (StaleDataError) or a unique constraint fails before anything is recorded, then
    the audit event joins the same transaction: it commits with the change or not at all."""
    pending = Change(before)
    yield pending
    session.flush()
    record(
        session,
        actor=actor,
        action=action,
        target=target,
        before=pending.before,
        after=pending.after,
        request_id=request_id,
    )


def query(target: str | None = None, actor: str | None = None) -> Select[Any]:
    stmt = select(AuditEvent)
    if target:
        stmt = stmt.where(AuditEvent.target == target)
    if actor:
        stmt = stmt.where(AuditEvent.actor == actor)
    return stmt.order_by(AuditEvent.id.desc())


def page(session: Session, stmt: Select, offset: int, limit: int) -> tuple[Sequence[AuditEvent], int]:
    return paging.page(session, stmt, offset, limit)
