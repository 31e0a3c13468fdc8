"""Append-only audit events, written inside the caller's transaction."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, select
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


def query(target: str | None = None, actor: str | None = None) -> Select[Any]:
    stmt = select(AuditEvent)
    if target:
        stmt = stmt.where(AuditEvent.target == target)
    if actor:
        stmt = stmt.where(AuditEvent.actor == actor)
    return stmt.order_by(AuditEvent.id.desc())


def page(session: Session, stmt: Select, offset: int, limit: int) -> tuple[Sequence[AuditEvent], int]:
    return paging.page(session, stmt, offset, limit)
