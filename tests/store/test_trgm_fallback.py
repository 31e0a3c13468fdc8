"""Migration 0005 where pg_trgm may not be created: a warning, no index, and the name filter still works."""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from urllib.parse import quote

import pytest
from scalecost.store import migrate, scenario_listing
from scalecost.store import scenarios as store
from scalecost.store.session import Database, normalise_url
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tests.conftest import PG_URL


@pytest.fixture
def unprivileged_url(db_backend):
    """A new database, and a role that owns a schema in it but may not create extensions there."""
    if db_backend != "postgresql":
        pytest.skip("pg_trgm is PostgreSQL's; SQLite has no trigram index to fall back from")
    name = f"noext_{uuid.uuid4().hex[:10]}"
    base = make_url(normalise_url(PG_URL))
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE ROLE "{name}" LOGIN'))
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    owner = create_engine(base.set(database=name), isolation_level="AUTOCOMMIT")
    with owner.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA app AUTHORIZATION "{name}"'))
    owner.dispose()
    url = base.set(username=name, password=None, database=name, query={})
    yield f"{url.render_as_string(hide_password=False)}?options={quote('-csearch_path=app')}"
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        conn.execute(text(f'DROP ROLE IF EXISTS "{name}"'))
    admin.dispose()


@pytest.mark.postgresql
def test_without_permission_for_pg_trgm_the_migration_warns_and_the_name_filter_scans(
    unprivileged_url, caplog
):
    with caplog.at_level(logging.WARNING, logger="alembic.runtime.migration"):
        migrate.upgrade(unprivileged_url)
    assert "pg_trgm is not available" in caplog.text and "ix_scenarios_name_trgm skipped" in caplog.text
    database = Database(unprivileged_url)
    try:
        with database.engine.connect() as conn:
            assert migrate.current_revision(conn) == migrate.head_revision()
            indexes = set(
                conn.execute(text("SELECT indexname FROM pg_indexes WHERE schemaname = 'app'")).scalars()
            )
        assert "ix_scenarios_name_trgm" not in indexes and "ix_scenarios_updated_at_id" in indexes
        when = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
        with database.transaction() as session:
            store.bulk_insert(
                session,
                [
                    {
                        "name": n,
                        "kind": "training",
                        "request": {},
                        "estimate": {},
                        "owner": "o",
                        "updated_at": when,
                    }
                    for n in ("Alpha-Plan", "beta-plan", "gamma")
                ],
            )
            page = scenario_listing.listing(session, name="PLAN", sort="name")
        assert [s.name for s in page.items] == ["Alpha-Plan", "beta-plan"]
        migrate.downgrade(unprivileged_url, "0004")  # nothing to drop: no error either
        migrate.upgrade(unprivileged_url)
    finally:
        database.dispose()
