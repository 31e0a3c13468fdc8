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


class _HungServer:
    """A TCP server that accepts connections and never answers (a hung Redis)."""

    def __init__(self):
        import socket
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.held: list = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)

    def close(self):
        self.sock.close()
        for conn in self.held:
            conn.close()


ESTIMATE = {
    "model": {"preset": "llama-2-7b"},
    "training": {"tokens": "1B", "global_batch_size": 64, "sequence_length": 4096},
    "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 8},
}


def test_a_hung_limiter_store_costs_a_request_its_timeout_not_seconds(migrated_url):
    """Redis that accepts and never answers made every limited request wait 5-10 s; the store's timeouts
    (RATELIMIT_STORAGE_TIMEOUT_S) bound it, then the request goes through (fail-open) and /readyz says so."""
    import time

    hung = _HungServer()
    try:
        app = create_app(
            {
                "DATABASE_URL": migrated_url,
                "RATELIMIT_STORAGE_URI": f"redis://127.0.0.1:{hung.port}/0",
                "RATELIMIT_STORAGE_TIMEOUT_S": 0.2,
                "RATELIMIT_ENABLED": True,
                "TESTING": True,
            }
        )
        reset_rows(app.extensions["scalecost.db"])
        client = app.test_client()
        started = time.monotonic()
        response = client.post("/v1/estimates/training", json=ESTIMATE)
        took = time.monotonic() - started
        assert response.status_code == 200
        assert took < 2.0, f"{took:.1f} s for one estimate with a hung limiter store"
        ready = client.get("/readyz")
        assert ready.status_code == 503 and ready.get_json()["rate_limiter"] == "unavailable"
        assert client.get("/livez").get_json() == {"status": "ok"}
        app.extensions["scalecost.db"].dispose()
    finally:
        hung.close()


def test_readyz_and_livez_when_all_is_well(migrated_url):
    app = create_app({"DATABASE_URL": migrated_url, "TESTING": True})
    client = app.test_client()
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.get_json() == {
        "status": "ok",
        "database": "ok",
        "migrations": "current",
        "rate_limiter": "ok",
        "connection_pool": "ok",
    }
    assert client.get("/livez").status_code == 200
    app.extensions["scalecost.db"].dispose()


def test_readyz_is_degraded_when_the_database_is_not_migrated(tmp_path):
    app = create_app({"DATABASE_URL": f"sqlite:///{tmp_path / 'empty.db'}", "TESTING": True})
    ready = app.test_client().get("/readyz")
    assert ready.status_code == 503 and ready.get_json()["migrations"] != "current"
    assert app.test_client().get("/livez").status_code == 200
    app.extensions["scalecost.db"].dispose()


def test_a_limiter_store_that_is_down_is_logged(migrated_url, tmp_path):
    """flask-limiter's 'storage unreachable, falling back to memory' line reached no handler outside gunicorn:
    a store that was down was never logged. It is one JSON line on stderr now."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import sys\n"
        "from scalecost import create_app\n"
        f"app = create_app({{'DATABASE_URL': {migrated_url!r}, 'RATELIMIT_STORAGE_URI': 'redis://127.0.0.1:1/0',"
        " 'RATELIMIT_ENABLED': True, 'RATELIMIT_STORAGE_TIMEOUT_S': 0.2, 'LOG_LEVEL': 'WARNING'})\n"
        "print(app.test_client().get('/v1/models').status_code)\n"
        "print(app.test_client().post('/v1/keys', json={'name': 'x', 'role': 'viewer'}).status_code)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        timeout=60,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    lines = [json.loads(line) for line in run.stderr.splitlines() if line.strip()]
    limiter_lines = [line for line in lines if line.get("logger") == "flask-limiter"]
    assert limiter_lines, run.stderr[-2000:]
    assert any(line["level"] in ("warning", "error") for line in limiter_lines)
