"""The catalog the library estimates on: the engine's pure `Catalog` (accelerators and the prices in force),
built from the seed data shipped in the package (no database needed) or read from a scalecost database."""

from __future__ import annotations

import datetime as dt
import functools

from ..engine import Catalog

__all__ = ["Catalog", "catalog_from_database", "catalog_from_seed", "default_catalog"]


@functools.lru_cache(maxsize=8)
def _seeded(as_of: dt.date | None, today: dt.date | None) -> Catalog:
    from ..store.memory import memory_session
    from ..store.seeding import seed_catalog
    from ..usecases.catalog import engine_catalog

    with memory_session() as session:
        seed_catalog(session)
        session.flush()
        return engine_catalog(session, as_of)  # pure dataclasses: outlive the database


def catalog_from_seed(as_of: dt.date | None = None) -> Catalog:
    """The default catalog (service/store/seed/*.csv) as `scalecost catalog seed` writes it, with the prices in
    force today (or on `as_of`); built in an in-memory SQLite database, once a day per process."""
    return _seeded(as_of, dt.datetime.now(dt.UTC).date() if as_of is None else None)


def catalog_from_database(url: str, as_of: dt.date | None = None) -> Catalog:
    """The catalog of the scalecost database at `url` (migrated and seeded: `scalecost db upgrade`, `scalecost
    catalog seed`), with the prices in force today or on `as_of`."""
    from ..store.session import Database
    from ..usecases.catalog import engine_catalog

    database = Database(url)
    try:
        with database.transaction() as session:
            return engine_catalog(session, as_of)
    finally:
        database.dispose()


def default_catalog(catalog: Catalog | None) -> Catalog:
    return catalog if catalog is not None else catalog_from_seed()
