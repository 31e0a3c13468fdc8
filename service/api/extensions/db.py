"""Per-request dependencies: the database session (one per request, closed at teardown), the app's catalog
cache, and the estimate use case bound to both."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from flask import Flask, current_app, g

from ...store.session import Database, Session
from ...usecases import estimates
from ...usecases.catalog import CatalogCache

DB_KEY = "scalecost.db"
CATALOG_CACHE_KEY = "scalecost.catalog_cache"


def database() -> Database:
    return current_app.extensions[DB_KEY]


def db_session() -> Session:
    session = g.get("_db_session")
    if session is None:
        session = database().session()
        g._db_session = session
    return session


def close_session(_exc: BaseException | None = None) -> None:
    session = g.pop("_db_session", None)
    if session is not None:
        session.close()  # rolls back anything not committed


def catalog_cache() -> CatalogCache:
    cache = current_app.extensions.get(CATALOG_CACHE_KEY)
    if cache is None:
        cache = current_app.extensions[CATALOG_CACHE_KEY] = CatalogCache(
            current_app.config["CATALOG_CACHE_TTL_S"], current_app.config["PRICE_STALE_AFTER_DAYS"]
        )
    return cache


def invalidate_catalog() -> None:
    """After a catalog write in this process: the next estimate reloads it."""
    catalog_cache().invalidate()


def run_estimate(
    kind: str,
    request: dict[str, Any],
    *,
    as_of: dt.date | None = None,
    offload: Callable[..., Any] | None = None,
) -> dict[str, Any]:
    return estimates.estimate(
        kind, request, db_session(), cache=catalog_cache(), as_of=as_of, offload=offload
    )


def init_app(app: Flask) -> None:
    """One Database per app (pool and statement timeout from the config); each request's session closes at teardown."""
    app.extensions[DB_KEY] = Database(
        app.config["DATABASE_URL"],
        pool_size=app.config["DB_POOL_SIZE"],
        statement_timeout_ms=app.config["DB_STATEMENT_TIMEOUT_MS"],
        lock_timeout_ms=app.config["DB_LOCK_TIMEOUT_MS"],
        busy_timeout_ms=app.config["SQLITE_BUSY_TIMEOUT_MS"],
    )
    app.teardown_appcontext(close_session)
