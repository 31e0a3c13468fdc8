"""Lock waits are not outages (issue: a second concurrent import got "503 the database is unavailable" after
5.6 s on PostgreSQL and 16.4 s on SQLite). While another connection holds the lock a request needs, the wait
ends after the configured lock timeout (SQLITE_BUSY_TIMEOUT_MS, DB_LOCK_TIMEOUT_MS) with a 409 for a write
(nothing written) or a 503 for a read, both with Retry-After and a detail saying a write is in progress;
/healthz stays ok. The gevent side (no frozen worker) is tests/contract/test_sqlite_lock_waits.py."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from scalecost import create_app
from scalecost.store.errors import is_locked, is_unavailable
from scalecost.store.session import make_engine
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "prices"
LOCK_TIMEOUT_MS = 300


@contextmanager
def write_lock_held(url: str) -> Iterator[None]:
    """Another connection holds the lock every write needs (SQLite: the database's write lock; PostgreSQL:
    an exclusive lock on accelerator_prices, which reads of prices wait for too)."""
    if url.startswith("sqlite"):
        holder = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        return
    engine = make_engine(url, single_use=True)
    with engine.connect() as conn:
        conn.execute(text("LOCK TABLE accelerator_prices IN ACCESS EXCLUSIVE MODE"))
        try:
            yield
        finally:
            conn.rollback()
    engine.dispose()


@pytest.fixture
def locking_app(app, migrated_url):
    other = create_app(
        {
            "DATABASE_URL": migrated_url,
            "TESTING": True,
            "RATELIMIT_ENABLED": False,
            "LOG_LEVEL": "ERROR",
            "SQLITE_BUSY_TIMEOUT_MS": LOCK_TIMEOUT_MS,
            "DB_LOCK_TIMEOUT_MS": LOCK_TIMEOUT_MS,
        }
    )
    other.config["PROPAGATE_EXCEPTIONS"] = False
    yield other
    other.extensions["scalecost.db"].dispose()


def _assert_write_in_progress(response, status: int, started: float) -> None:
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    assert int(response.headers["Retry-After"]) >= 1
    assert "write is in progress" in response.json["detail"], response.json
    assert "unavailable" not in response.json["detail"]
    assert time.monotonic() - started < 3.0, "the wait ends at the lock timeout"


def test_a_write_waiting_for_a_lock_is_a_409_with_retry_after(locking_app, admin_headers, migrated_url):
    client = locking_app.test_client()
    etag = client.get("/v1/accelerators/nvidia-l4").headers["ETag"]
    data = (FIXTURES / "catalog-prices.csv").read_bytes()
    with write_lock_held(migrated_url):
        started = time.monotonic()
        response = client.post(
            "/v1/price-imports",
            query_string={"source": "csv", "dry_run": "false", "name": "catalog-prices.csv"},
            data=data,
            headers={**admin_headers, "Content-Type": "text/csv"},
        )
        _assert_write_in_progress(response, 409, started)
        started = time.monotonic()
        response = client.put(
            "/v1/accelerators/nvidia-l4/prices/aws",
            json={"usd_per_hour": 0.5},
            headers={**admin_headers, "If-Match": etag},
        )
        _assert_write_in_progress(response, 409, started)
        health = client.get("/healthz")
        assert health.status_code == 200 and health.json["database"] == "ok", health.json
    response = client.put(
        "/v1/accelerators/nvidia-l4/prices/aws",
        json={"usd_per_hour": 0.5},
        headers={**admin_headers, "If-Match": etag},
    )
    assert response.status_code == 200, "nothing was written while locked: the ETag still matches"


def test_a_read_waiting_for_a_lock_is_a_503_that_says_a_write_is_in_progress(
    locking_app, migrated_url, db_backend
):
    if db_backend != "postgresql":
        pytest.skip("SQLite (WAL) readers never wait for the writer")
    client = locking_app.test_client()
    with write_lock_held(migrated_url):
        started = time.monotonic()
        response = client.get("/v1/accelerators/nvidia-l4")
        _assert_write_in_progress(response, 503, started)
        assert client.get("/healthz").status_code == 200


def test_sqlite_database_is_locked_is_locked_not_unavailable(tmp_path):
    path = tmp_path / "x.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN IMMEDIATE")
    engine = make_engine(f"sqlite:///{path}", busy_timeout_ms=50)
    with pytest.raises(OperationalError) as raised, engine.begin() as conn:
        conn.execute(text("INSERT INTO t VALUES (1)"))
    assert is_locked(raised.value) and not is_unavailable(raised.value)
    holder.execute("ROLLBACK")
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO t VALUES (1)"))
    engine.dispose()


def test_an_exhausted_pool_is_a_busy_503_not_an_unavailable_database(app, migrated_url, db_backend):
    """Requests waiting for a lock hold their connections; the next ones find none within the pool's timeout.
    The database still answers: the 503 says the connections are in use, not that the database is down."""
    if db_backend != "postgresql":
        pytest.skip("the PostgreSQL pool (pool_size = DB_POOL_SIZE, as many overflow, 5 s timeout)")
    other = create_app(
        {"DATABASE_URL": migrated_url, "TESTING": True, "LOG_LEVEL": "ERROR", "DB_POOL_SIZE": 1}
    )
    other.config["PROPAGATE_EXCEPTIONS"] = False
    engine = other.extensions["scalecost.db"].engine
    held = [engine.connect(), engine.connect()]
    try:
        response = other.test_client().get("/v1/accelerators/nvidia-l4")
        assert response.status_code == 503 and response.headers["Retry-After"], response.json
        assert "in use" in response.json["detail"] and "unavailable" not in response.json["detail"]
    finally:
        for conn in held:
            conn.close()
        other.extensions["scalecost.db"].dispose()


def test_the_probes_answer_from_their_own_connection_when_the_pool_is_exhausted(
    app, migrated_url, db_backend
):
    """Issue 28: with every pooled connection held (200 readers behind a lock), /healthz waited the pool's 5 s
    and said the database was unavailable (503). The probes have their own connection: 200, the database ok,
    the pool said to be saturated."""
    if db_backend != "postgresql":
        pytest.skip("the PostgreSQL pool (pool_size = DB_POOL_SIZE, as many overflow, 5 s timeout)")
    other = create_app(
        {"DATABASE_URL": migrated_url, "TESTING": True, "LOG_LEVEL": "ERROR", "DB_POOL_SIZE": 1}
    )
    database = other.extensions["scalecost.db"]
    client = other.test_client()
    assert client.get("/healthz").json["connection_pool"] == "ok"
    held = [database.engine.connect(), database.engine.connect()]
    try:
        for path in ("/healthz", "/readyz"):
            started = time.perf_counter()
            response = client.get(path)
            assert time.perf_counter() - started < 2.0
            assert response.status_code == 200, response.json
            assert response.json["database"] == "ok" and response.json["connection_pool"] == "saturated"
    finally:
        for conn in held:
            conn.close()
        database.dispose()
    assert client.get("/healthz").json["connection_pool"] == "ok"
