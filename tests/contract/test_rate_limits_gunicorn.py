"""A real gunicorn with several workers gives one client the configured number of writes, not N × workers.

Started as `make run` starts it (`gunicorn -c service/gunicorn_conf.py 'scalecost:create_app()'`), with
WEB_CONCURRENCY=4 and a low write limit; requests are sent from several threads at once so that every
worker takes some. Run once with the default storage (nothing configured: the workers of one gunicorn
share a local store) and once with RATELIMIT_STORAGE_URI=redis://… (skipped only when no Redis answers).
"""

from __future__ import annotations

import base64
import http.client
import os
import secrets
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from scalecost.store import keys, migrate
from scalecost.store.seeding import seed_catalog
from scalecost.store.session import Database

from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 20
WORKERS = 4
REDIS = ("127.0.0.1", 6379)


def _redis_up() -> bool:
    try:
        socket.create_connection(REDIS, timeout=0.5).close()
        return True
    except OSError:
        return False


def _database_with_editor_key(tmp_path: Path) -> tuple[str, str]:
    url = f"sqlite:///{tmp_path}/limits.db"
    migrate.upgrade(url)
    database = Database(url)
    with database.transaction() as session:
        seed_catalog(session)
        _key, secret = keys.create(session, "limit-tester", "editor", actor="test")
    database.dispose()
    return url, secret


def _wait_until_up(port: int, proc: subprocess.Popen, timeout_s: float = 25) -> None:
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"gunicorn exited at boot:\n{proc.stdout.read().decode(errors='replace')}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError("gunicorn did not answer /healthz")


def _send(port: int, method: str, path: str, headers: dict[str, str]) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, headers=headers)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def _burst(port: int, count: int, method: str, path: str, headers_for) -> Counter:
    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = pool.map(lambda i: _send(port, method, path, headers_for(i)), range(count))
        return Counter(statuses)


def _allowed(statuses: Counter) -> int:
    return sum(n for status, n in statuses.items() if status != 429)


@pytest.mark.parametrize("storage", ["default", "redis"])
def test_one_client_gets_the_configured_limit_from_a_multi_worker_gunicorn(tmp_path, storage):
    if storage == "redis" and not _redis_up():
        pytest.skip("no Redis at 127.0.0.1:6379")
    url, secret = _database_with_editor_key(tmp_path)
    port = free_port()
    env = {
        **os.environ,
        "PORT": str(port),
        "WEB_CONCURRENCY": str(WORKERS),
        "DATABASE_URL": url,
        # an hour-long fixed window: a per-minute window aligned to the clock can reset mid-test and allow 2x
        "RATELIMIT_WRITES": f"{LIMIT} per hour",
        "LOG_LEVEL": "WARNING",
    }
    env.pop("RATELIMIT_STORAGE_URI", None)
    if storage == "redis":
        env["RATELIMIT_STORAGE_URI"] = f"redis://{REDIS[0]}:{REDIS[1]}/0"
        env["RATELIMIT_KEY_PREFIX"] = f"test-{uuid.uuid4().hex}"  # runs never share counters
    gunicorn = Path(sys.executable).with_name("gunicorn")
    proc = subprocess.Popen(
        [str(gunicorn), "-c", "service/gunicorn_conf.py", "scalecost:create_app()"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        _wait_until_up(port, proc)
        # One key, spelled the way auth accepts it, deleting a scenario that does not exist (cheap: 428/404).
        keyed = _burst(
            port, 3 * LIMIT, "DELETE", "/v1/scenarios/999999", lambda i: {"Authorization": f"Bearer {secret}"}
        )
        # One anonymous client sending a different, invalid Authorization header each time.
        anonymous = _burst(
            port,
            3 * LIMIT,
            "POST",
            "/v1/scenarios",
            lambda i: {"Authorization": "Basic " + base64.b64encode(secrets.token_bytes(12)).decode()},
        )
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
    assert all(status < 500 for status in (*keyed, *anonymous)), (keyed, anonymous)
    tolerance = LIMIT // 10  # within 10 %
    assert abs(_allowed(keyed) - LIMIT) <= tolerance, f"key: {dict(keyed)}, limit {LIMIT}/h"
    assert abs(_allowed(anonymous) - LIMIT) <= tolerance, f"address: {dict(anonymous)}, limit {LIMIT}/h"
