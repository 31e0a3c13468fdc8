"""Behind a proxy, clients keep their own rate-limit buckets; a limiter store that is down is not an outage."""

from __future__ import annotations

from scalecost import create_app
from scalecost.config import from_env

from tests.conftest import reset_rows

BODY = {"name": "x", "role": "viewer"}  # anonymous: a 401, counted against the client's write budget


def _statuses(client, address: str, n: int) -> list[int]:
    return [
        client.post("/v1/keys", json=BODY, headers={"X-Forwarded-For": address}).status_code for _ in range(n)
    ]


def test_trusted_proxy_gives_each_forwarded_client_its_own_bucket(migrated_url):
    app = create_app(
        {
            "DATABASE_URL": migrated_url,
            "RATELIMIT_WRITES": "2 per minute",
            "TRUSTED_PROXIES": 1,
            "TESTING": True,
        }
    )
    client = app.test_client()
    assert _statuses(client, "203.0.113.1", 3) == [401, 401, 429]
    assert _statuses(client, "203.0.113.2", 2) == [401, 401]  # another client behind the same proxy
    app.extensions["scalecost.db"].dispose()


def test_without_a_trusted_proxy_forwarded_headers_are_ignored(migrated_url):
    """Otherwise any client could pick a new identity per request by sending X-Forwarded-For itself."""
    app = create_app({"DATABASE_URL": migrated_url, "RATELIMIT_WRITES": "2 per minute", "TESTING": True})
    client = app.test_client()
    assert _statuses(client, "203.0.113.1", 2) == [401, 401]
    assert _statuses(client, "203.0.113.2", 1) == [429]
    app.extensions["scalecost.db"].dispose()


def test_unreachable_limiter_store_lets_requests_through(migrated_url):
    app = create_app(
        {
            "DATABASE_URL": migrated_url,
            "RATELIMIT_STORAGE_URI": "redis://127.0.0.1:1/0",  # nothing listens on port 1
            "RATELIMIT_ENABLED": True,
            "TESTING": True,
        }
    )
    reset_rows(app.extensions["scalecost.db"])  # the catalog, seeded
    response = app.test_client().get("/healthz")
    assert response.status_code != 500
    estimate = app.test_client().post(
        "/v1/estimates/training",
        json={
            "model": {"preset": "llama-2-7b"},
            "training": {"tokens": "1B", "global_batch_size": 64, "sequence_length": 4096},
            "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 8},
            "output": {"recommendations": False},
        },
    )
    assert estimate.status_code == 200, estimate.json
    app.extensions["scalecost.db"].dispose()


def test_log_level_is_read_in_any_case():
    assert from_env({"LOG_LEVEL": "warning"})["LOG_LEVEL"] == "WARNING"
    create_app(
        {
            "DATABASE_URL": "sqlite:///nonexistent-dir/never.db",
            "LOG_LEVEL": from_env({"LOG_LEVEL": "debug"})["LOG_LEVEL"],
        }
    )
