"""GET /healthz reports the database, the migration state and the service's version."""

from __future__ import annotations

import tomllib
from pathlib import Path

import yaml
from scalecost import API_VERSION, create_app

PYPROJECT_VERSION = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())[
    "project"
]["version"]


def test_healthz_ok_when_database_answers_and_is_at_head(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json == {
        "status": "ok",
        "database": "ok",
        "migrations": "current",
        "connection_pool": "ok",
        "version": API_VERSION,
    }


def test_healthz_503_when_database_is_unreachable(offline_app):
    response = offline_app.test_client().get("/healthz")
    assert response.status_code == 503
    assert response.json["database"] == "unavailable"


def test_healthz_503_when_migrations_are_pending(empty_db_url):
    app = create_app({"DATABASE_URL": empty_db_url, "TESTING": True})
    response = app.test_client().get("/healthz")
    app.extensions["scalecost.db"].dispose()
    assert response.status_code == 503
    assert response.json == {
        "status": "degraded",
        "database": "ok",
        "migrations": "pending",
        "connection_pool": "ok",
        "version": API_VERSION,
    }


def test_the_version_is_pyprojects_in_healthz_and_the_contract(client):
    """One version, written in pyproject.toml (an install older than the file fails here: `make install` again)."""
    assert API_VERSION == PYPROJECT_VERSION
    assert client.get("/healthz").json["version"] == PYPROJECT_VERSION
    assert client.get("/openapi.json").json["info"]["version"] == PYPROJECT_VERSION
    committed = yaml.safe_load(
        (Path(__file__).resolve().parents[2] / "openapi.yaml").read_text(encoding="utf-8")
    )
    assert committed["info"]["version"] == PYPROJECT_VERSION
