"""Issue 9, defects 1 and 4: ids are never reused, and every unique violation (raced or not) is a 409."""

from __future__ import annotations

import threading

from scalecost import create_app
from scalecost.store import migrate
from scalecost.store.seeding import seed_catalog
from scalecost.store.session import make_engine
from sqlalchemy import text

from tests.conftest import fresh_database_url, make_key

TRAINING = {
    "model": {"preset": "llama-2-7b"},
    "training": {"tokens": "1B", "global_batch_size": 64, "sequence_length": 4096},
    "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 8},
}


def _create(client, headers, name):
    return client.post(
        "/v1/scenarios", json={"name": name, "kind": "training", "request": TRAINING}, headers=headers
    )


def test_deleting_the_newest_scenario_never_frees_its_id(client, editor_headers):
    first = _create(client, editor_headers, "first")
    assert first.status_code == 201, first.json
    newest = _create(client, editor_headers, "newest")
    if_match = {**editor_headers, "If-Match": newest.headers["ETag"]}
    assert client.delete(newest.headers["Location"], headers=if_match).status_code == 204
    for name in ("again", "and-again"):
        created = _create(client, editor_headers, name)
        assert created.status_code == 201, created.json
        assert created.json["id"] > newest.json["id"]
    history = client.get(f"/v1/scenarios/{newest.json['id']}/revisions", headers=editor_headers)
    assert [r["action"] for r in history.json] == ["create", "delete"]


def test_revoked_and_new_keys_get_new_ids(app):
    from scalecost.store import keys

    database = app.extensions["scalecost.db"]
    with database.transaction() as session:
        old, _ = keys.create(session, "temporary", "viewer", actor="test")
        old_id = old.id
    with database.transaction() as session:
        session.delete(session.get(type(old), old_id))
    with database.transaction() as session:
        new, _ = keys.create(session, "replacement", "viewer", actor="test")
        assert new.id > old_id


def test_database_migrated_from_0003_with_a_deleted_newest_scenario(db_backend, tmp_path_factory):
    """Rows written under revision 0003 (no AUTOINCREMENT): the deleted scenario's id lives on only in its
    revisions; after the upgrade a new scenario must not take it."""
    url, drop = fresh_database_url(db_backend, tmp_path_factory)
    try:
        migrate.upgrade(url, "0003")
        engine = make_engine(url, single_use=True)
        with engine.begin() as conn:
            for sid, name in ((1, "kept"), (2, "deleted-newest")):
                conn.execute(
                    text(
                        "INSERT INTO scenarios (id, name, kind, tags, request, estimate, prices, summary, owner,"
                        " version, created_at, updated_at) VALUES (:id, :name, 'training', '[]', '{}', '{}',"
                        " '{}', '{}', 'seed', 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                    ),
                    {"id": sid, "name": name},
                )
                for revision, action in ((1, "create"), (2, "delete")) if sid == 2 else ((1, "create"),):
                    conn.execute(
                        text(
                            "INSERT INTO scenario_revisions (scenario_id, revision, action, name, kind, tags,"
                            " request, estimate, prices, author, created_at) VALUES (:sid, :rev, :action,"
                            " :name, 'training', '[]', '{}', '{}', '{}', 'seed', CURRENT_TIMESTAMP)"
                        ),
                        {"sid": sid, "rev": revision, "action": action, "name": name},
                    )
            conn.execute(text("DELETE FROM scenarios WHERE id = 2"))
            if db_backend == "postgresql":  # explicit ids do not move a sequence: do what the app would have
                conn.execute(text("SELECT setval(pg_get_serial_sequence('scenarios', 'id'), 2)"))
        engine.dispose()

        migrate.upgrade(url)
        app = create_app({"DATABASE_URL": url, "TESTING": True, "RATELIMIT_ENABLED": False})
        with app.extensions["scalecost.db"].transaction() as session:
            seed_catalog(session)
        headers = {"Authorization": f"Bearer {make_key(app, 'editor', 'editor')}"}
        created = _create(app.test_client(), headers, "after-upgrade")
        assert created.status_code == 201, created.json
        assert created.json["id"] > 2
        app.extensions["scalecost.db"].dispose()
    finally:
        drop()


def test_concurrent_creates_with_one_name_are_one_201_and_the_rest_409(app, editor_headers):
    statuses = _race(app, 32, lambda c: _create(c, editor_headers, "raced").status_code)
    assert statuses.count(201) == 1, statuses
    assert set(statuses) == {201, 409}, statuses


def test_unique_violation_past_the_check_is_a_409_problem(client, app, editor_headers, monkeypatch):
    """The window between "is the name taken?" and INSERT, made deterministic: the check says no."""
    from scalecost.store import scenarios as store

    assert _create(client, editor_headers, "taken").status_code == 201
    monkeypatch.setattr(store, "name_taken", lambda *a, **k: False)
    response = _create(client, editor_headers, "taken")
    assert response.status_code == 409
    assert response.headers["Content-Type"] == "application/problem+json"
    assert "name" in response.json["detail"]


def _race(app, attempts: int, call) -> list[int]:
    barrier = threading.Barrier(attempts)
    statuses: list[int] = []
    lock = threading.Lock()

    def one() -> None:
        client = app.test_client()
        barrier.wait()
        status = call(client)
        with lock:
            statuses.append(status)

    threads = [threading.Thread(target=one) for _ in range(attempts)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return statuses


def test_concurrent_key_and_accelerator_creates_are_one_201_and_the_rest_409(app, admin_headers):
    keys = _race(
        app,
        16,
        lambda c: c.post("/v1/keys", json={"name": "k", "role": "viewer"}, headers=admin_headers).status_code,
    )
    assert keys.count(201) == 1 and set(keys) == {201, 409}, keys
    spec = {
        "id": "raced-accelerator",
        "name": "Raced",
        "vendor": "Test",
        "kind": "gpu",
        "memory_bytes": 80_000_000_000,
        "memory_bandwidth_bytes_per_s": 3.35e12,
        "peak_flops_per_s": {"bf16": 9.89e14},
    }
    accs = _race(app, 16, lambda c: c.post("/v1/accelerators", json=spec, headers=admin_headers).status_code)
    assert accs.count(201) == 1 and set(accs) == {201, 409}, accs
