"""Per-request dependencies: the database session (one per request, closed at teardown)."""

from __future__ import annotations

from flask import current_app, g
from sqlalchemy.orm import Session

from service.store.session import Database

DB_KEY = "scalecost.db"


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
