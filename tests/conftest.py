"""Shared fixtures: every database test runs on SQLite, and on PostgreSQL when TEST_DATABASE_URL is set."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from urllib.parse import quote

import pytest
from hypothesis import settings
from scalecost import create_app
from scalecost.store import migrate
from scalecost.store.models import Base
from scalecost.store.seeding import seed_catalog
from scalecost.store.session import Database, normalise_url
from sqlalchemy import create_engine, text

# CI runs property tests derandomized (same examples every run); locally they explore new ones.
settings.register_profile("ci", derandomize=True, deadline=None, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

PG_URL = os.environ.get("TEST_DATABASE_URL")
PG_SKIP_REASON = "TEST_DATABASE_URL is not set: PostgreSQL variants skipped (.ci/run sets it)"
BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param(
        "postgresql",
        id="postgresql",
        marks=[pytest.mark.postgresql, pytest.mark.skipif(not PG_URL, reason=PG_SKIP_REASON)],
    ),
]


def free_port() -> int:
    """A TCP port nothing listens on right now."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pg_schema_url(schema: str) -> str:
    base = normalise_url(PG_URL or "")
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}options={quote(f'-csearch_path={schema}')}"


def fresh_database_url(backend: str, tmp_path_factory) -> tuple[str, callable]:
    """An empty database (SQLite file, or a new PostgreSQL schema) and a function that drops it."""
    if backend == "sqlite":
        path = tmp_path_factory.mktemp("db") / "test.db"
        return f"sqlite:///{path}", lambda: None
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(normalise_url(PG_URL), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))

    def drop() -> None:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()

    return _pg_schema_url(schema), drop


@pytest.fixture
def empty_db_url(db_backend, tmp_path_factory) -> Iterator[str]:
    """A brand-new empty database on each backend."""
    url, drop = fresh_database_url(db_backend, tmp_path_factory)
    yield url
    drop()


@pytest.fixture(params=BACKENDS, scope="session")
def db_backend(request) -> str:
    return request.param


@pytest.fixture(scope="session")
def migrated_url(db_backend, tmp_path_factory) -> Iterator[str]:
    """One migrated database per backend for the whole session; tests reset its rows."""
    url, drop = fresh_database_url(db_backend, tmp_path_factory)
    migrate.upgrade(url)
    yield url
    drop()


def reset_rows(database: Database) -> None:
    """Empty every table (children first) and re-seed the catalog: each test starts from the same state."""
    with database.transaction() as session:
        for table in reversed(Base.metadata.sorted_tables):
            session.execute(table.delete())
        seed_catalog(session)


@pytest.fixture
def app(migrated_url):
    application = create_app(
        {"DATABASE_URL": migrated_url, "TESTING": True, "RATELIMIT_ENABLED": False, "LOG_LEVEL": "WARNING"}
    )
    database = application.extensions["scalecost.db"]
    reset_rows(database)
    yield application
    database.dispose()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def offline_app():
    """An app built without any reachable database (spec generation, engine-only endpoints)."""
    return create_app({"DATABASE_URL": "sqlite:///nonexistent-dir/never.db", "TESTING": True})


def make_key(app, name: str, role: str) -> str:
    from scalecost.store import keys

    with app.extensions["scalecost.db"].transaction() as session:
        _key, secret = keys.create(session, name, role, actor="test")
    return secret


@pytest.fixture
def admin_headers(app) -> dict[str, str]:
    return {"Authorization": f"Bearer {make_key(app, 'test-admin', 'admin')}"}


@pytest.fixture
def editor_headers(app) -> dict[str, str]:
    return {"Authorization": f"Bearer {make_key(app, 'test-editor', 'editor')}"}


@pytest.fixture
def viewer_headers(app) -> dict[str, str]:
    return {"Authorization": f"Bearer {make_key(app, 'test-viewer', 'viewer')}"}
