"""A throw-away in-memory SQLite database with the models' schema (no migrations): what the library builds its
seeded catalog in when there is no database at all (service/library/catalog.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.orm import Session

from .models import Base
from .session import make_engine


@contextmanager
def memory_session() -> Iterator[Session]:
    """One session on a fresh in-memory database holding every table; gone when the block ends."""
    # SQLAlchemy keeps one connection per thread for :memory:, so the tables stay for the session
    engine = make_engine("sqlite://")
    try:
        Base.metadata.create_all(engine)
        with Session(engine) as session, session.begin():
            yield session
    finally:
        engine.dispose()
