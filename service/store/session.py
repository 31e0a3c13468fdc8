"""Engine and session management: one engine per app, one session per request."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import NullPool


def normalise_url(url: str) -> str:
    """Accept the URL spellings people paste (postgres://, postgresql://) and use the psycopg 3 driver."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url[len("postgres://") :]
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://") :]
    return url


def make_engine(
    url: str, pool_size: int = 5, statement_timeout_ms: int | None = None, single_use: bool = False
) -> Engine:
    url = normalise_url(url)
    backend = make_url(url).get_backend_name()
    kwargs: dict = {"pool_pre_ping": True}
    if single_use:
        kwargs["poolclass"] = NullPool
    if backend == "sqlite":
        kwargs["connect_args"] = {"check_same_thread": False, "timeout": 15}
    elif backend == "postgresql":
        if not single_use:
            kwargs.update(pool_size=pool_size, max_overflow=pool_size, pool_timeout=5)
        connect_args: dict = {"connect_timeout": 3}
        if statement_timeout_ms:
            # keep any options the URL carries (e.g. a search_path) beside the timeout
            existing = make_url(url).query.get("options", "")
            connect_args["options"] = f"{existing} -c statement_timeout={int(statement_timeout_ms)}".strip()
        kwargs["connect_args"] = connect_args
    engine = create_engine(url, **kwargs)
    if backend == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def _sqlite_pragmas(dbapi_connection, _record) -> None:  # pragma: no cover - trivial
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=15000")
    cursor.close()


class Database:
    """Holds the engine and a session factory. Created lazily: building the app needs no connection."""

    def __init__(self, url: str, pool_size: int = 5, statement_timeout_ms: int | None = None):
        self.url = normalise_url(url)
        self._pool_size = pool_size
        self._statement_timeout_ms = statement_timeout_ms
        self._engine: Engine | None = None
        self._factory: sessionmaker[Session] | None = None

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = make_engine(self.url, self._pool_size, self._statement_timeout_ms)
            self._factory = sessionmaker(self._engine, expire_on_commit=False)
        return self._engine

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
        if self._engine is not None:
            self._engine.dispose()


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
