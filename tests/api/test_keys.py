"""API keys: shown once, stored hashed, roles enforced, revocation immediate; CLI and admin endpoints."""

from __future__ import annotations

from click.testing import CliRunner
from scalecost.cli import main as cli
from scalecost.store.models import ApiKey, AuditEvent
from sqlalchemy import select


def test_created_key_is_prefixed_shown_once_and_stored_only_as_hash(app, client, admin_headers):
    response = client.post("/v1/keys", json={"name": "ci", "role": "editor"}, headers=admin_headers)
    assert response.status_code == 201
    secret = response.json["key"]
    assert secret.startswith("sc_") and len(secret) > 40
    with app.extensions["scalecost.db"].transaction() as session:
        row = session.scalars(select(ApiKey).where(ApiKey.name == "ci")).one()
        assert secret not in (row.key_hash, row.prefix) and len(row.key_hash) == 64
    listed = client.get("/v1/keys", headers=admin_headers).json
    assert all("key" not in k for k in listed) and {"ci", "test-admin"} <= {k["name"] for k in listed}


def test_missing_and_invalid_keys_are_401_with_www_authenticate(client):
    for headers in ({}, {"Authorization": "Bearer sc_not-a-real-key"}, {"Authorization": "Basic abc"}):
        response = client.get("/v1/keys", headers=headers)
        assert response.status_code == 401
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
        assert response.mimetype == "application/problem+json"


def test_wrong_role_is_403_problem(client, viewer_headers, editor_headers):
    for headers in (viewer_headers, editor_headers):
        response = client.post("/v1/keys", json={"name": "x", "role": "viewer"}, headers=headers)
        assert response.status_code == 403 and response.mimetype == "application/problem+json"


def test_duplicate_key_name_is_409(client, admin_headers):
    assert (
        client.post("/v1/keys", json={"name": "dup", "role": "viewer"}, headers=admin_headers).status_code
        == 201
    )
    assert (
        client.post("/v1/keys", json={"name": "dup", "role": "viewer"}, headers=admin_headers).status_code
        == 409
    )


def test_invalid_role_is_422_naming_allowed_values(client, admin_headers):
    response = client.post("/v1/keys", json={"name": "x", "role": "root"}, headers=admin_headers)
    assert response.status_code == 422
    assert "viewer, editor, admin" in response.json["errors"]["role"][0]


def test_revoked_key_stops_working_at_once(app, client, admin_headers):
    secret = client.post("/v1/keys", json={"name": "temp", "role": "admin"}, headers=admin_headers).json[
        "key"
    ]
    temp = {"Authorization": f"Bearer {secret}"}
    assert client.get("/v1/keys", headers=temp).status_code == 200
    assert client.delete("/v1/keys/temp", headers=admin_headers).status_code == 204
    assert client.get("/v1/keys", headers=temp).status_code == 401
    assert client.delete("/v1/keys/temp", headers=admin_headers).status_code == 404


def test_key_changes_are_audited(app, client, admin_headers):
    client.post("/v1/keys", json={"name": "audited", "role": "viewer"}, headers=admin_headers)
    client.delete("/v1/keys/audited", headers=admin_headers)
    events = client.get("/v1/audit-events?target=key:audited", headers=admin_headers).json
    assert [e["action"] for e in events] == ["key.revoke", "key.create"]
    assert events[0]["actor"] == "test-admin" and events[0]["before"]["revoked_at"] is None
    with app.extensions["scalecost.db"].transaction() as session:
        assert (
            session.scalar(select(AuditEvent).where(AuditEvent.target == "key:audited").limit(1)) is not None
        )


def test_cli_creates_lists_and_revokes_keys(app, migrated_url, admin_headers):  # another admin: not the last
    runner = CliRunner()
    created = runner.invoke(
        cli, ["keys", "create", "--name", "cli-key", "--role", "admin", "--url", migrated_url]
    )
    assert created.exit_code == 0, created.output
    secret = created.output.strip().splitlines()[-1]
    assert secret.startswith("sc_")
    client = app.test_client()
    assert client.get("/v1/keys", headers={"Authorization": f"Bearer {secret}"}).status_code == 200
    listed = runner.invoke(cli, ["keys", "list", "--url", migrated_url])
    assert "cli-key\tadmin" in listed.output
    assert runner.invoke(cli, ["keys", "revoke", "cli-key", "--url", migrated_url]).exit_code == 0
    assert client.get("/v1/keys", headers={"Authorization": f"Bearer {secret}"}).status_code == 401


def test_reads_are_open_unless_required(app, client, viewer_headers):
    assert client.get("/v1/accelerators/nvidia-t4").status_code == 200
    app.config["REQUIRE_AUTH_FOR_READS"] = True
    assert client.get("/v1/accelerators/nvidia-t4/prices/history").status_code == 401
    assert client.get("/v1/accelerators/nvidia-t4/prices/history", headers=viewer_headers).status_code == 200
