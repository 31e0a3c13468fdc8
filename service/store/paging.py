"""Offset pagination shared by the catalog and audit listings (scenarios have their own, index-first)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session


def page(session: Session, stmt: Select, offset: int, limit: int) -> tuple[Sequence[Any], int]:
    """The rows of one page and the total the filters match."""
    total = session.scalar(select(func.count()).select_from(stmt.order_by(None).subquery())) or 0
    return session.scalars(stmt.offset(offset).limit(limit)).all(), total
