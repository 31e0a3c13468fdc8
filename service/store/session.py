"""Engine and session management: one engine per app, one session per request.

Lock waits are bounded and never freeze a gevent worker:
- SQLite: a write waits for another writer's lock at most `busy_timeout_ms` (the server: SQLITE_BUSY_TIMEOUT_MS,
  2 s; the CLI: 15 s, as it waits for the server's short writes), then fails with "database is locked"
  (store/errors.is_locked: a 409 or 503 saying a write is in progress). SQLite waits for a lock inside
  sqlite3_step, in C: under gevent that would stop the worker's event loop (every request of the process, the
  probes too) for the whole wait. So under gevent every statement that can wait for the lock (anything but a
  SELECT or PRAGMA; and COMMIT) runs in gevent's native thread pool (`_CooperativeConnection`): the wait then
  blocks only the request that makes it, as the sqlite3 module lets go of the GIL while SQLite waits.
- PostgreSQL: `lock_timeout` (DB_LOCK_TIMEOUT_MS, 2 s) ends a wait for a row or table lock with SQLSTATE 55P03,
  well before the statement timeout (5 s), so a lock held by a long write does not hold the pool's connections.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import NullPool

from ..greenlets import off_the_loop


def normalise_url(url: str) -> str:
    """Accept the URL spellings people paste (postgres://, postgresql://) and use the psycopg 3 driver."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url[len("postgres://") :]
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://") :]
    return url


SQLITE_BUSY_TIMEOUT_MS = (
    15_000  # the CLI's and scripts' wait for a SQLite write lock; the server's is shorter
)


_off_the_loop = off_the_loop


def _may_wait(sql: str) -> bool:
    """Whether a statement can wait for SQLite's write lock: anything that is not a plain read."""
    head = sql.lstrip()[:6].upper()
    return head not in ("SELECT", "PRAGMA")


class _CooperativeCursor(sqlite3.Cursor):
    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:  # type: ignore[override]
        if _may_wait(sql):
            return _off_the_loop(super().execute, sql, parameters)
        return super().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> sqlite3.Cursor:  # type: ignore[override]
        return _off_the_loop(super().executemany, sql, parameters)


class _CooperativeConnection(sqlite3.Connection):
    """A sqlite3 connection whose lock waits happen off the gevent loop (see the module's docstring)."""

    def cursor(self, factory: Any = _CooperativeCursor) -> Any:
        return super().cursor(factory)

    def commit(self) -> None:
        _off_the_loop(super().commit)


PROBE_STATEMENT_TIMEOUT_MS = 2000  # a probe's SELECT 1 and revision read; a probe answers within ~3 s


def make_engine(
    url: str,
    pool_size: int = 5,
    statement_timeout_ms: int | None = None,
    single_use: bool = False,
    *,
    lock_timeout_ms: int | None = None,
    busy_timeout_ms: int = SQLITE_BUSY_TIMEOUT_MS,
    pool_timeout_s: float = 5,
) -> Engine:
    url = normalise_url(url)
    backend = make_url(url).get_backend_name()
    kwargs: dict = {"pool_pre_ping": True}
    if single_use:
        kwargs["poolclass"] = NullPool
    if backend == "sqlite":
        kwargs["connect_args"] = {
            "check_same_thread": False,
            "timeout": busy_timeout_ms / 1000,
            "factory": _CooperativeConnection,
        }
    elif backend == "postgresql":
        if not single_use:
            kwargs.update(pool_size=pool_size, max_overflow=pool_size, pool_timeout=pool_timeout_s)
        connect_args: dict = {"connect_timeout": 3}
        timeouts = [
            *([f"-c statement_timeout={int(statement_timeout_ms)}"] if statement_timeout_ms else []),
            *([f"-c lock_timeout={int(lock_timeout_ms)}"] if lock_timeout_ms else []),
        ]
        if timeouts:
            # keep any options the URL carries (e.g. a search_path) beside the timeouts
            existing = make_url(url).query.get("options", "")
            connect_args["options"] = " ".join([str(existing), *timeouts]).strip()
        kwargs["connect_args"] = connect_args
    engine = create_engine(url, **kwargs)
    if backend == "sqlite":
        event.listen(engine, "connect", partial(_sqlite_pragmas, busy_timeout_ms=busy_timeout_ms))
    return engine


def _sqlite_pragmas(dbapi_connection, _record, *, busy_timeout_ms: int) -> None:  # pragma: no cover - trivial
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
    cursor.close()


class Database:
    """Holds the engine and a session factory. Created lazily: building the app needs no connection."""

    def __init__(
        self,
        url: str,
        pool_size: int = 5,
        statement_timeout_ms: int | None = None,
        *,
        lock_timeout_ms: int | None = None,
        busy_timeout_ms: int = SQLITE_BUSY_TIMEOUT_MS,
    ):
        self.url = normalise_url(url)
        self._pool_size = pool_size
        self._statement_timeout_ms = statement_timeout_ms
        self._lock_timeout_ms = lock_timeout_ms
        self._busy_timeout_ms = busy_timeout_ms
        self._engine: Engine | None = None
        self._probe_engine: Engine | None = None
        self._factory: sessionmaker[Session] | None = None

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = make_engine(
                self.url,
                self._pool_size,
                self._statement_timeout_ms,
                lock_timeout_ms=self._lock_timeout_ms,
                busy_timeout_ms=self._busy_timeout_ms,
            )
            self._factory = sessionmaker(self._engine, expire_on_commit=False)
        return self._engine

    @property
    def probe_engine(self) -> Engine:
        """The probes' own connection (one, a second on overflow, 1 s to get one): requests that hold every
        connection of the main pool make the probes neither wait 5 s nor report the database down (issue 28)."""
        if self._probe_engine is None:
            self._probe_engine = make_engine(
                self.url,
                1,
                PROBE_STATEMENT_TIMEOUT_MS,
                busy_timeout_ms=PROBE_STATEMENT_TIMEOUT_MS,
                pool_timeout_s=1,
            )
        return self._probe_engine

    def pool_saturated(self) -> bool:
        """Every connection of the main pool is checked out (requests beyond wait, then answer 503 'in use')."""
        pool = self.engine.pool
        size, overflow = getattr(pool, "size", None), getattr(pool, "_max_overflow", None)
        if not callable(size) or not isinstance(overflow, int) or overflow < 0:
            return False  # NullPool / StaticPool: nothing to exhaust
        return pool.checkedout() >= size() + overflow  # type: ignore[attr-defined]

    def session(self) -> Session:
        self.engine  # noqa: B018 - initialises the factory
        assert self._factory is not None
        return self._factory()

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """A session whose work commits on success and rolls back entirely on any error."""
        session = self.session()
        try:
            with session.begin():
                yield session
        finally:
            session.close()

    def dispose(self) -> None:
        for engine in (self._engine, self._probe_engine):
            if engine is not None:
                engine.dispose()


# Unique constraints a client can run into, by the name the naming convention gives them (and, for SQLite,
# which names no constraint in its message, by table.column): what the 409 problem says.
_UNIQUE_MESSAGES = {
    "uq_scenarios_name": ("scenarios.name", "A scenario with this name exists."),
    "uq_api_keys_name": ("api_keys.name", "A key with this name exists."),
    "pk_accelerators": ("accelerators.id", "An accelerator with this id exists."),
}


def unique_violation(error: BaseException) -> str | None:
    """The client-facing message when `error` is a unique-constraint violation, else None.

    Concurrent creates with one name both pass the application's "name taken?" check; the database's unique
    constraint then refuses all but one (PostgreSQL SQLSTATE 23505, SQLite "UNIQUE constraint failed")."""
    from sqlalchemy.exc import IntegrityError

    if not isinstance(error, IntegrityError):
        return None
    orig = error.orig
    sqlstate = getattr(orig, "sqlstate", None)
    text = str(orig)
    if sqlstate == "23505":
        constraint = getattr(getattr(orig, "diag", None), "constraint_name", None) or ""
        return _UNIQUE_MESSAGES.get(constraint, ("", "The resource conflicts with an existing one."))[1]
    if "UNIQUE constraint failed" in text or "PRIMARY KEY" in text:
        for column, message in _UNIQUE_MESSAGES.values():
            if column in text:
                return message
        return "The resource conflicts with an existing one."
    return None
