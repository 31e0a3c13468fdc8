"""gunicorn with the production config stops gracefully on SIGTERM: the in-flight request completes; it binds this
machine only unless HOST says otherwise."""

from __future__ import annotations

import os
import re
import runpy
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]


def _wait_until_up(port: int, timeout_s: float = 20) -> None:
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/openapi.json", timeout=1)
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError("gunicorn did not start")


def test_sigterm_lets_in_flight_requests_finish(tmp_path):
    port = free_port()
    env = {
        **os.environ,
        "PORT": str(port),
        "WEB_CONCURRENCY": "1",
        "DATABASE_URL": f"sqlite:///{tmp_path}/g.db",
    }
    gunicorn = Path(sys.executable).with_name("gunicorn")
    proc = subprocess.Popen(
        [str(gunicorn), "-c", "service/gunicorn_conf.py", "tests.fixtures.slow_app:app"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        _wait_until_up(port)
        result: dict = {}

        def call() -> None:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/test-slow", timeout=10) as response:
                result["status"], result["body"] = response.status, response.read()

        caller = threading.Thread(target=call)
        caller.start()
        time.sleep(0.7)  # the request is now in flight
        proc.send_signal(signal.SIGTERM)
        caller.join(timeout=15)
        assert result.get("status") == 200 and b"slept_s" in result["body"]
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def _bind(monkeypatch, **env: str) -> str:
    for name in ("HOST", "PORT"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(ROOT / "service" / "gunicorn_conf.py"))["bind"]


@pytest.mark.parametrize(
    ("env", "bind"),
    [
        ({}, "127.0.0.1:8000"),
        ({"PORT": "9000"}, "127.0.0.1:9000"),
        ({"HOST": "0.0.0.0", "PORT": "8000"}, "0.0.0.0:8000"),
        ({"HOST": "::"}, "[::]:8000"),
    ],
)
def test_gunicorn_binds_host_and_port_this_machine_by_default(monkeypatch, env, bind):
    assert _bind(monkeypatch, **env) == bind


def test_make_run_binds_this_machine_unless_told():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^HOST \?= 127\.0\.0\.1$", makefile, re.MULTILINE)
    assert "HOST=$(HOST) PORT=$(PORT)" in makefile
