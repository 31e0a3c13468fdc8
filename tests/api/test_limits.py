"""Body size, nesting and rate limits answer with problems, never 500."""

from __future__ import annotations

import base64
import json
import secrets
import time

import pytest
from scalecost import create_app


def test_body_over_the_configured_size_is_413_problem(offline_app):
    offline_app.config["MAX_CONTENT_LENGTH"] = 1024
    response = offline_app.test_client().post(
        "/v1/estimates/training", data=json.dumps({"pad": "x" * 5000}), content_type="application/json"
    )
    assert response.status_code == 413 and response.mimetype == "application/problem+json"


def test_deeply_nested_json_is_400_not_500(offline_app):
    body = "[" * 50_000 + "]" * 50_000
    response = offline_app.test_client().post(
        "/v1/estimates/training", data=body, content_type="application/json"
    )
    assert response.status_code in (400, 422) and response.mimetype == "application/problem+json"


def test_malformed_json_is_400_problem(offline_app):
    response = offline_app.test_client().post(
        "/v1/estimates/training", data="{not json", content_type="application/json"
    )
    assert response.status_code == 400 and response.mimetype == "application/problem+json"


def test_writes_are_rate_limited_with_429_problem_and_retry_after(migrated_url):
    app = create_app(
        {"DATABASE_URL": migrated_url, "RATELIMIT_WRITES": "2 per minute", "RATELIMIT_ENABLED": True}
    )
    client = app.test_client()
    codes = [client.post("/v1/keys", json={"name": "x", "role": "viewer"}).status_code for _ in range(3)]
    assert codes == [401, 401, 429]
    limited = client.post("/v1/keys", json={"name": "x", "role": "viewer"})
    assert limited.mimetype == "application/problem+json" and int(limited.headers["Retry-After"]) > 0
    # reads of the catalog are not limited
    assert all(client.get("/healthz").status_code != 429 for _ in range(5))
    app.extensions["scalecost.db"].dispose()


def _redis_up() -> bool:
    import socket

    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=0.5).close()
        return True
    except OSError:
        return False


def test_rate_limits_are_shared_through_redis_between_instances(migrated_url):
    import uuid

    import pytest

    if not _redis_up():
        pytest.skip("no Redis at 127.0.0.1:6379")
    config = {
        "DATABASE_URL": migrated_url,
        "RATELIMIT_WRITES": "2 per minute",
        "RATELIMIT_ENABLED": True,
        "RATELIMIT_STORAGE_URI": "redis://127.0.0.1:6379",
        "RATELIMIT_KEY_PREFIX": uuid.uuid4().hex,
    }
    first, second = create_app(config), create_app(config)  # two instances, one Redis
    body = {"name": "x", "role": "viewer"}
    assert first.test_client().post("/v1/keys", json=body).status_code == 401
    assert second.test_client().post("/v1/keys", json=body).status_code == 401
    assert first.test_client().post("/v1/keys", json=body).status_code == 429
    for app in (first, second):
        app.extensions["scalecost.db"].dispose()


# --- who a client is, and which budget a request spends (issue 9, items 6 and 7) ---------------------

SERVE = {
    "model": {"preset": "llama-3-8b"},
    "weights": {"precision": "int4", "format": "awq"},
    "hardware": {"accelerator": "nvidia-rtx-4090", "count": 1},
}


@pytest.fixture
def limited_app(migrated_url):
    from tests.conftest import reset_rows

    app = create_app(
        {
            "DATABASE_URL": migrated_url,
            "RATELIMIT_ENABLED": True,
            "RATELIMIT_WRITES": "3 per minute",
            "RATELIMIT_ESTIMATES": "30 per minute",
            "LOG_LEVEL": "WARNING",
        }
    )
    reset_rows(app.extensions["scalecost.db"])
    yield app
    app.extensions["scalecost.db"].dispose()


def _key(app, name: str, role: str = "editor") -> str:
    from tests.conftest import make_key

    return make_key(app, name, role)


def _post_key(client, headers: dict[str, str] | None = None) -> int:
    return client.post("/v1/keys", json={"name": "x", "role": "viewer"}, headers=headers or {}).status_code


def test_a_new_invalid_authorization_header_per_request_is_not_a_new_client(limited_app):
    client = limited_app.test_client()
    codes = [
        _post_key(client, {"Authorization": "Basic " + base64.b64encode(secrets.token_bytes(12)).decode()})
        for _ in range(5)
    ]
    assert codes == [401, 401, 401, 429, 429]
    # unknown bearer tokens and garbage are the same client: its address
    assert _post_key(client, {"Authorization": f"Bearer sc_{secrets.token_urlsafe(32)}"}) == 429
    assert _post_key(client, {"Authorization": secrets.token_hex(8)}) == 429
    assert _post_key(client) == 429


def test_a_key_counts_against_its_own_bucket_however_it_is_spelled(limited_app):
    secret = _key(limited_app, "spelling-editor")
    client = limited_app.test_client()
    spellings = [f"Bearer {secret}", f"bEaReR   {secret}", f"BEARER {secret}  "]
    assert [_post_key(client, {"Authorization": s}) for s in spellings] == [403, 403, 403]
    assert _post_key(client, {"Authorization": f"bearer {secret}"}) == 429
    # the address's own budget is untouched: the key is the client, not the address
    assert _post_key(client) == 401


def test_two_keys_have_separate_budgets(limited_app):
    first, second = _key(limited_app, "first-editor"), _key(limited_app, "second-editor")
    client = limited_app.test_client()
    assert [_post_key(client, {"Authorization": f"Bearer {first}"}) for _ in range(4)] == [403] * 3 + [429]
    assert [_post_key(client, {"Authorization": f"Bearer {second}"}) for _ in range(4)] == [403] * 3 + [429]


def test_estimates_have_their_own_much_larger_budget(limited_app):
    secret = _key(limited_app, "sweeper")
    client = limited_app.test_client()
    headers = {"Authorization": f"Bearer {secret}"}
    assert [_post_key(client, headers) for _ in range(4)] == [403, 403, 403, 429]  # writes spent
    codes = [
        client.post("/v1/estimates/inference", json=SERVE, headers=headers).status_code for _ in range(30)
    ]
    assert codes == [200] * 30
    limited = client.post("/v1/estimates/training", json={}, headers=headers)
    assert limited.status_code == 429 and limited.mimetype == "application/problem+json"
    assert int(limited.headers["Retry-After"]) > 0


def test_comparing_scenarios_is_a_computation_not_a_write(limited_app):
    secret = _key(limited_app, "comparer")
    client = limited_app.test_client()
    headers = {"Authorization": f"Bearer {secret}"}
    codes = [
        client.post("/v1/scenarios/compare", json={"ids": [424242]}, headers=headers).status_code
        for _ in range(5)
    ]
    assert codes == [404] * 5
    assert [_post_key(client, headers) for _ in range(4)] == [403, 403, 403, 429]


def test_the_key_is_looked_up_once_per_request(limited_app, monkeypatch):
    from scalecost.store import keys

    secret = _key(limited_app, "counted")
    calls = []
    real = keys.authenticate
    monkeypatch.setattr(
        keys, "authenticate", lambda session, token: calls.append(token) or real(session, token)
    )
    response = limited_app.test_client().post(
        "/v1/estimates/inference", json=SERVE, headers={"Authorization": f"Bearer {secret}"}
    )
    assert response.status_code == 200 and len(calls) == 1


def test_default_estimate_budget_fits_a_sweep_of_a_thousand_configurations():
    from limits import parse
    from scalecost import config

    defaults = config.from_env({})
    estimates, writes = parse(defaults["RATELIMIT_ESTIMATES"]), parse(defaults["RATELIMIT_WRITES"])
    per_minute = estimates.amount * 60 / estimates.get_expiry()
    assert per_minute >= 1000 and per_minute >= 10 * writes.amount * 60 / writes.get_expiry()
    assert defaults["RATELIMIT_STORAGE_URI"] == "local://"


# --- the default storage: counters shared by processes --------------------------------------------


def _hits(path: str, count: int) -> None:
    from scalecost.api.extensions.limit_storage import SQLiteStorage

    storage = SQLiteStorage(f"sqlite:///{path}")
    for _ in range(count):
        storage.incr("k", 60)


def test_sqlite_storage_counts_once_for_several_processes(tmp_path):
    import multiprocessing

    from scalecost.api.extensions.limit_storage import SQLiteStorage

    path = str(tmp_path / "limits.sqlite")
    context = multiprocessing.get_context("fork")
    procs = [context.Process(target=_hits, args=(path, 200)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=20)
        assert p.exitcode == 0
    storage = SQLiteStorage(f"sqlite:///{path}")
    assert storage.get("k") == 800 and storage.get_expiry("k") > time.time() + 50
    storage.clear("k")
    assert storage.get("k") == 0 and storage.check()


def test_sqlite_storage_window_restarts_after_expiry(tmp_path):
    from scalecost.api.extensions.limit_storage import SQLiteStorage

    storage = SQLiteStorage(f"sqlite:///{tmp_path}/w.sqlite")
    assert [storage.incr("w", 1) for _ in range(3)] == [1, 2, 3]
    time.sleep(1.05)
    assert storage.get("w") == 0 and storage.incr("w", 1, amount=2) == 2


def test_local_storage_is_one_file_per_gunicorn_master(monkeypatch, tmp_path):
    import os

    from scalecost.api.extensions import limit_storage

    assert limit_storage.LocalStorage("local://").resolve_path() == limit_storage.MEMORY
    monkeypatch.setenv("SERVER_SOFTWARE", "gunicorn/23.0.0")
    monkeypatch.setattr(limit_storage.tempfile, "gettempdir", lambda: str(tmp_path))
    dead = tmp_path / f"scalecost-ratelimit-{os.getuid()}"
    dead.mkdir(mode=0o700)
    (dead / "gunicorn-999999999-1.sqlite").write_text("")  # a master that has exited
    path = limit_storage.LocalStorage("local://").resolve_path()
    assert path.startswith(str(dead / f"gunicorn-{os.getppid()}-"))
    assert not (dead / "gunicorn-999999999-1.sqlite").exists()
