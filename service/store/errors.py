"""What the store's failures mean to a caller, so that no layer above it needs to know SQLAlchemy.

- `DatabaseError`: anything the database layer raised.
- `ConcurrentChange`: an optimistic-concurrency check failed (the row's version moved): a 412 upstairs.
- `Conflict`: an integrity constraint refused the write; `unique_violation(err)` says which unique one.
- `is_unavailable(err)`: the database cannot be reached (connection refused or lost, pool exhausted): a 503.
"""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError, SQLAlchemyError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from sqlalchemy.orm.exc import StaleDataError

from .session import unique_violation

DatabaseError = SQLAlchemyError
ConcurrentChange = StaleDataError
Conflict = IntegrityError


def is_unavailable(error: BaseException) -> bool:
    return isinstance(error, OperationalError | PoolTimeoutError) or (
        isinstance(error, DBAPIError) and bool(error.connection_invalidated)
    )


__all__ = ["ConcurrentChange", "Conflict", "DatabaseError", "is_unavailable", "unique_violation"]
