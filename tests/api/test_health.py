"""GET /healthz reports the database and the migration state."""

from __future__ import annotations

from scalecost import create_app


def test_healthz_ok_when_database_answers_and_is_at_head(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json == {"status": "ok", "database": "ok", "migrations": "current"}


def test_healthz_503_when_database_is_unreachable(offline_app):
    response = offline_app.test_client().get("/healthz")
    assert response.status_code == 503
    assert response.json["database"] == "unavailable"


def test_healthz_503_when_migrations_are_pending(empty_db_url):
    app = create_app({"DATABASE_URL": empty_db_url, "TESTING": True})
    response = app.test_client().get("/healthz")
    app.extensions["scalecost.db"].dispose()
    assert response.status_code == 503
    assert response.json == {"status": "degraded", "database": "ok", "migrations": "pending"}
