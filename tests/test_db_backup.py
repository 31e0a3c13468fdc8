"""Backup and restore (docs/operations.md). SQLite: `scalecost db backup PATH` / `scalecost db restore PATH` with
sqlite3's online backup API, run as a user runs them while an app holds the database open. PostgreSQL: pg_dump and
pg_restore round-trip a scenario into a fresh database (when TEST_DATABASE_URL is set and pg_dump is installed)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from scalecost import create_app
from scalecost.store import migrate
from scalecost.store.seeding import seed_catalog
from scalecost.store.session import normalise_url
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tests.conftest import PG_SKIP_REASON, PG_URL, _pg_schema_url, make_key, reset_rows

SCALECOST = Path(sys.executable).parent / "scalecost"
TRAINING = {
    "model": {"preset": "llama-2-7b"},
    "training": {"tokens": "1B", "global_batch_size": 64, "sequence_length": 4096},
    "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 8, "parallelism": {"data": 8}},
}


def run(*args: str, cwd: Path, url: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DATABASE_URL_FILE")}
    if url:
        env["DATABASE_URL"] = url
    return subprocess.run(
        [str(SCALECOST), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def _app(url: str):
    app = create_app(
        {"DATABASE_URL": url, "TESTING": True, "RATELIMIT_ENABLED": False, "LOG_LEVEL": "WARNING"}
    )
    return (
        app,
        app.test_client(),
        {"Authorization": f"Bearer {make_key(app, f'ops-{uuid.uuid4().hex[:8]}', 'editor')}"},
    )


def _create(client, headers, name: str) -> dict:
    response = client.post(
        "/v1/scenarios", json={"name": name, "kind": "training", "request": TRAINING}, headers=headers
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def _sqlite_database(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'live.db'}"
    migrate.upgrade(url)
    engine = create_engine(url)
    from sqlalchemy.orm import Session

    with Session(engine) as session, session.begin():
        seed_catalog(session)
    engine.dispose()
    return url


def test_sqlite_backup_and_restore_round_trip_while_the_app_runs(tmp_path):
    url = _sqlite_database(tmp_path)
    app, client, headers = _app(url)
    try:
        kept = _create(client, headers, "kept")
        result = run("db", "backup", str(tmp_path / "b.db"), cwd=tmp_path, url=url)
        assert result.returncode == 0, result.stderr
        assert f"revision {migrate.head_revision()}" in result.stdout
        later = _create(client, headers, "made after the backup")

        result = run("db", "restore", str(tmp_path / "b.db"), "--yes", cwd=tmp_path, url=url)
        assert result.returncode == 0, result.stderr
        # the running app (its pooled connections open all along) sees the restored rows
        assert client.get(f"/v1/scenarios/{kept['id']}", headers=headers).get_json() == kept
        assert client.get(f"/v1/scenarios/{later['id']}", headers=headers).status_code == 404
        assert client.get("/healthz").get_json()["migrations"] == "current"
    finally:
        app.extensions["scalecost.db"].dispose()

    # a restore into a new file makes a whole database of its own
    fresh = tmp_path / "fresh.db"
    assert (
        run("db", "restore", str(tmp_path / "b.db"), cwd=tmp_path, url=f"sqlite:///{fresh}").returncode == 0
    )
    app, client, headers = _app(f"sqlite:///{fresh}")
    try:
        assert client.get(f"/v1/scenarios/{kept['id']}", headers=headers).get_json() == kept
    finally:
        app.extensions["scalecost.db"].dispose()


def test_refusals_change_nothing(tmp_path):
    url = _sqlite_database(tmp_path)
    live = tmp_path / "live.db"
    before = live.read_bytes()
    (tmp_path / "exists.db").write_text("x")
    refused = run("db", "backup", str(tmp_path / "exists.db"), cwd=tmp_path, url=url)
    assert refused.returncode == 1 and "exists" in refused.stderr and "Traceback" not in refused.stderr
    (tmp_path / "not-a-db").write_text("hello")
    refused = run("db", "restore", str(tmp_path / "not-a-db"), "--yes", cwd=tmp_path, url=url)
    assert refused.returncode == 1 and "nothing was restored" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert live.read_bytes() == before
    asked = run("db", "restore", str(live), cwd=tmp_path, url=f"sqlite:///{tmp_path / 'exists.db'}")
    assert asked.returncode == 1 and "Replace every row" in asked.stdout + asked.stderr  # no --yes, no tty
    assert (tmp_path / "exists.db").read_text() == "x"
    postgres = run("db", "backup", str(tmp_path / "p.dump"), cwd=tmp_path, url="postgresql://u@h:5432/d")
    assert postgres.returncode == 1 and "pg_dump" in postgres.stderr


def _libpq(url: str) -> str:
    """A SQLAlchemy URL as pg_dump and pg_restore take it."""
    parsed = make_url(normalise_url(url))
    return parsed.set(drivername="postgresql").render_as_string(hide_password=False)


@pytest.mark.postgresql
@pytest.mark.skipif(not PG_URL, reason=PG_SKIP_REASON)
@pytest.mark.skipif(
    not shutil.which("pg_dump"), reason="pg_dump is not installed (apt-get install postgresql-client)"
)
def test_postgresql_pg_dump_and_pg_restore_round_trip_a_scenario_into_a_fresh_database(tmp_path):
    """The procedure of docs/operations.md: pg_dump -Fc of the service's schema, pg_restore into a new database."""
    schema, fresh = f"t_{uuid.uuid4().hex[:12]}", f"restore_{uuid.uuid4().hex[:12]}"
    admin = create_engine(normalise_url(PG_URL), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    url = _pg_schema_url(schema)
    try:
        migrate.upgrade(url)
        app = create_app(
            {"DATABASE_URL": url, "TESTING": True, "RATELIMIT_ENABLED": False, "LOG_LEVEL": "WARNING"}
        )
        try:
            reset_rows(app.extensions["scalecost.db"])  # the catalog the scenario names
            client = app.test_client()
            headers = {"Authorization": f"Bearer {make_key(app, 'ops', 'editor')}"}
            scenario = _create(client, headers, "through pg_dump")
        finally:
            app.extensions["scalecost.db"].dispose()
        dump = tmp_path / "scalecost.dump"
        base = _libpq(PG_URL)
        subprocess.run(["pg_dump", "-Fc", "-n", schema, "-f", str(dump), base], check=True, timeout=120)
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{fresh}"'))
        target = make_url(normalise_url(PG_URL)).set(database=fresh)
        # A dump of one schema (-n) leaves out the extensions, which live in `public`; a whole-database dump, the
        # procedure for production, carries CREATE EXTENSION itself (docs/operations.md).
        fresh_admin = create_engine(target, isolation_level="AUTOCOMMIT")
        with fresh_admin.connect() as conn:
            conn.execute(text("CREATE EXTENSION IF NOT EXISTS pg_trgm"))
        fresh_admin.dispose()
        target_libpq = target.set(drivername="postgresql").render_as_string(hide_password=False)
        subprocess.run(
            ["pg_restore", "--no-owner", "--exit-on-error", "-d", target_libpq, str(dump)],
            check=True,
            timeout=120,
        )
        restored_url = target.render_as_string(hide_password=False) + f"?options=-csearch_path%3D{schema}"
        app, client, headers = _app(restored_url)
        try:
            assert client.get(f"/v1/scenarios/{scenario['id']}", headers=headers).get_json() == scenario
            health = client.get("/healthz").get_json()
            assert {k: health[k] for k in ("status", "database", "migrations")} == {
                "status": "ok",
                "database": "ok",
                "migrations": "current",
            }
        finally:
            app.extensions["scalecost.db"].dispose()
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{fresh}" WITH (FORCE)'))
            conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()
