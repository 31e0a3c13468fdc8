"""What the store's failures mean to a caller, so that no layer above it needs to know SQLAlchemy.

- `DatabaseError`: anything the database layer raised.
- `ConcurrentChange`: an optimistic-concurrency check failed (the row's version moved): a 412 upstairs.
- `Conflict`: an integrity constraint refused the write; `unique_violation(err)` says which unique one.
- `is_locked(err)`: a wait for a lock another write holds ran out (SQLite "database is locked" after its busy
  timeout; PostgreSQL lock_timeout 55P03, a serialization failure 40001 or a deadlock 40P01): the database
  answers, a write is in progress: a 409 (or 503 for a read) with Retry-After, never "unavailable".
- `is_saturated(err)`: every pooled connection stayed in use for the pool's timeout (many slow requests, or
  requests waiting for a lock): the database answers, this process has no free connection: a 503 that says so.
- `is_unavailable(err)`: the database cannot be reached (connection refused or lost): a 503.
"""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError, SQLAlchemyError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from sqlalchemy.orm.exc import StaleDataError

from .session import unique_violation

DatabaseError = SQLAlchemyError
ConcurrentChange = StaleDataError
Conflict = IntegrityError


LOCK_SQLSTATES = {"55P03", "40001", "40P01"}  # lock_not_available, serialization_failure, deadlock_detected
SQLITE_LOCKED = {"SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_BUSY_SNAPSHOT", "SQLITE_LOCKED_SHAREDCACHE"}


def is_locked(error: BaseException) -> bool:
    if not isinstance(error, DBAPIError) or error.connection_invalidated:
        return False
    orig = error.orig
    if getattr(orig, "sqlstate", None) in LOCK_SQLSTATES:
        return True
    if getattr(orig, "sqlite_errorname", None) in SQLITE_LOCKED:
        return True
    text = str(orig)
    return "database is locked" in text or "database table is locked" in text


def is_saturated(error: BaseException) -> bool:
    return isinstance(error, PoolTimeoutError)


def is_unavailable(error: BaseException) -> bool:
    if is_locked(error) or is_saturated(error):
        return False
    return isinstance(error, OperationalError | PoolTimeoutError) or (
        isinstance(error, DBAPIError) and bool(error.connection_invalidated)
    )


__all__ = [
    "ConcurrentChange",
    "Conflict",
    "DatabaseError",
    "is_locked",
    "is_saturated",
    "is_unavailable",
    "unique_violation",
]
