"""Body size, nesting and rate limits answer with problems, never 500."""

from __future__ import annotations

import json

from service import create_app


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
