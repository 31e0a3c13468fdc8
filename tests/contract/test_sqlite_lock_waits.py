"""A write waiting for SQLite's lock freezes no worker (issue: any lock holder — another process, or the
project's own `scalecost prices import` — froze the gevent worker for up to 15 s: /healthz p99 15.4 s, writes
503 after 15 s, a worker killed). A real gunicorn with its gevent worker on a SQLite file; another process (this
one) holds the write lock; a price PUT waits for it. Meanwhile /healthz answers at once, and the PUT ends after
SQLITE_BUSY_TIMEOUT_MS with a 409 and Retry-After saying a write is in progress.

Before: SQLite waited for the lock in C on the event loop's thread, so /healthz waited with it."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import threading
import time
import urllib.error
import urllib.request

from tests.contract.test_slow_clients import BIN, _Server

BUSY_TIMEOUT_S = 3.0
HEALTH_LIMIT_S = 1.0


def _call(request: urllib.request.Request, timeout: float) -> tuple[float, int | str, dict, dict]:
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body, status, headers = response.read(), response.status, dict(response.headers)
    except urllib.error.HTTPError as error:
        body, status, headers = error.read(), error.code, dict(error.headers)
    except OSError as error:
        return time.monotonic() - started, type(error).__name__, {}, {}
    return time.monotonic() - started, status, headers, json.loads(body or b"{}")


def test_a_write_waiting_for_the_sqlite_lock_leaves_healthz_fast_and_ends_in_409(tmp_path):
    path = tmp_path / "locks.db"
    server = _Server(
        f"sqlite:///{path}",
        tmp_path / "gunicorn.log",
        {
            "WEB_CONCURRENCY": "1",
            "SQLITE_BUSY_TIMEOUT_MS": str(int(BUSY_TIMEOUT_S * 1000)),
            "RATELIMIT_ENABLED": "false",
        },
    )
    server.prepare_database()
    created = subprocess.run(
        [str(BIN / "scalecost"), "keys", "create", "--name", "locks", "--role", "admin"],
        env=server.env, capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    secret = created.stdout.strip().splitlines()[-1]
    try:
        server.start()
        _, status, headers, _ = _call(urllib.request.Request(server.url("/v1/accelerators/nvidia-l4")), 10)
        assert status == 200, server.log_tail()
        put = urllib.request.Request(
            server.url("/v1/accelerators/nvidia-l4/prices/aws"),
            data=json.dumps({"usd_per_hour": 0.5}).encode(),
            method="PUT",
            headers={
                "Authorization": f"Bearer {secret}",
                "If-Match": headers["ETag"],
                "Content-Type": "application/json",
            },
        )
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        try:
            answer: list = []
            writer = threading.Thread(target=lambda: answer.append(_call(put, BUSY_TIMEOUT_S + 10)))
            writer.start()
            time.sleep(0.3)  # the PUT is waiting for the lock
            health = []
            while writer.is_alive() and len(health) < 200:
                health.append(_call(urllib.request.Request(server.url("/healthz")), 5))
                time.sleep(0.05)
            writer.join(timeout=BUSY_TIMEOUT_S + 15)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        seconds, status, headers, body = answer[0]
        worst = max(s for s, *_ in health)
        report = f"PUT {status} after {seconds:.2f} s; /healthz: {len(health)} samples, worst {worst:.3f} s"
        print(report)
        assert status == 409, (report, body, server.log_tail())
        assert headers.get("Retry-After") and "write is in progress" in body["detail"], (report, body)
        assert BUSY_TIMEOUT_S - 0.5 < seconds < BUSY_TIMEOUT_S + 3, report
        assert len(health) >= 10 and {s for _, s, *_ in health} == {200}, report
        assert worst < HEALTH_LIMIT_S, report
        _, status, _, _ = _call(put, 10)
        assert status == 200, "the lock gone, the same write goes through (nothing was written before)"
        assert server.proc.poll() is None, server.log_tail()
    finally:
        server.stop()
