"""A real gunicorn with the production config (service/gunicorn_conf.py) and two workers: /metrics counts the
requests of every worker whichever worker answers the scrape (prometheus_client's multiprocess mode), and every
line gunicorn and the app write to stderr is one JSON object, a traceback included."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
APP = "tests.fixtures.ops_app:app"


class Gunicorn:
    def __init__(self, tmp_path: Path, **env: str):
        self.port = free_port()
        self.stderr_path = tmp_path / "stderr.log"
        self.stdout_path = tmp_path / "stdout.log"
        environ = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
        environ.update(
            PORT=str(self.port), DATABASE_URL=f"sqlite:///{tmp_path}/ops.db", RATELIMIT_ENABLED="false", **env
        )
        self.proc = subprocess.Popen(
            [str(Path(sys.executable).with_name("gunicorn")), "-c", "service/gunicorn_conf.py", APP],
            cwd=ROOT,
            env=environ,
            stdout=self.stdout_path.open("wb"),
            stderr=self.stderr_path.open("wb"),
        )

    def get(self, path: str, headers: dict[str, str] | None = None):
        """(status, headers, body) of one request on a new connection."""
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read()

    def wait_up(self, timeout_s: float = 30) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.stderr_path.read_text(errors="replace")[-3000:]
            try:
                if self.get("/livez")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise AssertionError(
            "gunicorn did not start\n" + self.stderr_path.read_text(errors="replace")[-3000:]
        )

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise


def _count(metrics_text: str, route: str) -> float:
    pattern = (
        rf'^scalecost_http_requests_total\{{method="GET",route="{re.escape(route)}",status="200"\}} (\S+)$'
    )
    found = re.search(pattern, metrics_text, re.MULTILINE)
    return float(found[1]) if found else 0.0


def test_metrics_add_up_over_the_workers(tmp_path):
    metrics_dir = tmp_path / "prom"
    metrics_dir.mkdir()
    (metrics_dir / "counter_1.db").write_bytes(b"left from a former run")  # emptied at start
    server = Gunicorn(tmp_path, WEB_CONCURRENCY="2", PROMETHEUS_MULTIPROC_DIR=str(metrics_dir))
    try:
        server.wait_up()
        assert not (metrics_dir / "counter_1.db").exists()
        sent, pids = 0, set()
        deadline = time.monotonic() + 20
        with ThreadPoolExecutor(max_workers=16) as pool:
            while len(pids) < 2 and time.monotonic() < deadline:  # until both workers have answered some
                answers = list(pool.map(lambda _: server.get("/test-pid"), range(32)))
                sent += len(answers)
                assert {status for status, _, _ in answers} == {200}
                pids |= {json.loads(body)["pid"] for _, _, body in answers}
        assert len(pids) == 2, "both workers answered"
        assert len({p.name.rsplit("_", 1)[-1] for p in metrics_dir.glob("counter_*.db")}) == 2

        scrapers, deadline = set(), time.monotonic() + 20
        with ThreadPoolExecutor(max_workers=8) as pool:
            while len(scrapers) < 2 and time.monotonic() < deadline:  # a scrape answered by each worker
                for status, headers, body in pool.map(lambda _: server.get("/metrics"), range(8)):
                    assert status == 200 and headers["Content-Type"].startswith("text/plain")
                    text = body.decode()
                    assert _count(text, "/test-pid") == sent, (
                        "every worker's requests, whichever worker answers"
                    )
                    assert "scalecost_http_request_duration_seconds_bucket{" in text
                    assert re.search(r"^scalecost_heavy_work_slots 2\.0$", text, re.MULTILINE), (
                        "1 slot x 2 workers"
                    )
                    scrapers.add(int(headers["X-Worker-Pid"]))
        assert scrapers == pids

        # a worker killed outright: gunicorn starts another, child_exit marks the dead one's gauges gone (its
        # slot no longer counts), its counters stay counted
        dead = min(pids)
        os.kill(dead, signal.SIGKILL)
        deadline, new = time.monotonic() + 30, set()
        while not new and time.monotonic() < deadline:
            try:
                new = {json.loads(server.get("/test-pid")[2])["pid"]} - pids
                sent += 1
            except OSError:
                pass
            time.sleep(0.05)
        assert new, "gunicorn replaced the killed worker"
        text = server.get("/metrics")[2].decode()
        assert re.search(r"^scalecost_heavy_work_slots 2\.0$", text, re.MULTILINE), (
            "not 3: the dead one is gone"
        )
        assert _count(text, "/test-pid") == sent
    finally:
        assert server.stop() == 0


def test_every_stderr_line_is_json_with_tracebacks_as_a_field(tmp_path):
    server = Gunicorn(tmp_path, WEB_CONCURRENCY="1", LOG_LEVEL="info")
    try:
        server.wait_up()
        status, headers, body = server.get("/test-boom", headers={"X-Request-ID": "boom-1"})
        assert status == 500 and json.loads(body)["request_id"] == "boom-1"
        assert server.get("/livez")[0] == 200
    finally:
        assert server.stop() == 0
    lines = [line for line in server.stderr_path.read_text().splitlines() if line.strip()]
    records = []
    for line in lines:
        record = json.loads(line)  # every line, gunicorn's own included
        assert isinstance(record, dict) and {"time", "level", "logger"} <= set(record), line
        records.append(record)
    assert server.stdout_path.read_text() == ""

    (error,) = [r for r in records if r["logger"] == "scalecost.errors"]
    assert error["level"] == "error" and error["request_id"] == "boom-1"
    assert (
        error["exc_info"].startswith("Traceback")
        and "RuntimeError: boom for the log test" in error["exc_info"]
    )
    access = [r for r in records if r["logger"] == "scalecost.access" and r.get("request_id") == "boom-1"]
    assert [r["status"] for r in access] == [500]
    gunicorn = " ".join(r["message"] for r in records if r["logger"] == "gunicorn.error")
    assert "Booting worker" in gunicorn and "Shutting down" in gunicorn

    # the metrics directory gunicorn_conf made for itself (no PROMETHEUS_MULTIPROC_DIR) is gone at exit
    (started,) = [r["message"] for r in records if "PROMETHEUS_MULTIPROC_DIR=" in r.get("message", "")]
    assert not Path(started.rsplit("=", 1)[1]).exists()


def _post(server: Gunicorn, path: str, body: dict, language: str):
    request = urllib.request.Request(
        f"http://127.0.0.1:{server.port}{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Accept-Language": language},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_planner_searches_run_off_the_loop_in_the_callers_language(tmp_path):
    """The planners' searches and a batch's estimates run in a native thread of the gevent worker (work.offload): the answer is the
    same, in the request's language (the language is a context variable, copied into the thread), and an
    impossible request is still the 422 it was."""
    url = f"sqlite:///{tmp_path}/ops.db"
    cli = str(Path(sys.executable).with_name("scalecost"))
    for args in (["db", "upgrade"], ["catalog", "seed"]):
        subprocess.run([cli, *args], env={**os.environ, "DATABASE_URL": url}, check=True, capture_output=True)
    server = Gunicorn(tmp_path, WEB_CONCURRENCY="1")
    training = {
        "model": {"preset": "llama-2-7b"},
        "training": {"tokens": "20B", "global_batch_size": 512, "sequence_length": 4096},
        "search": {"accelerators": ["nvidia-h100-sxm-80gb"], "device_counts": [8, 16]},
    }
    serving = {
        "model": {"preset": "llama-3-8b"},
        "workload": {"requests_per_second": 5, "prompt_tokens": 512, "output_tokens": 256},
        "slo": {"time_to_first_token_s": 1.0, "time_per_output_token_s": 0.05},
        "search": {"accelerators": ["nvidia-l4"], "engines": ["vllm"]},
    }
    try:
        server.wait_up()
        status, english = _post(server, "/v1/plans/training", training, "en")
        assert status == 200, english
        status, spanish = _post(server, "/v1/plans/training", training, "es")
        assert (
            status == 200
            and spanish["best"]["estimate"]["time"]["human"] != english["best"]["estimate"]["time"]["human"]
        )
        assert (
            spanish["best"]["estimate"]["cost"]["total_usd"]
            == english["best"]["estimate"]["cost"]["total_usd"]
        )
        assert "días" in spanish["best"]["estimate"]["time"]["human"], spanish["best"]["estimate"]["time"][
            "human"
        ]
        status, served = _post(server, "/v1/plans/inference", serving, "fr")
        assert status == 200 and served["plan"] is not None, served
        status, refused = _post(
            server, "/v1/plans/training", {**training, "model": {"preset": "no-such"}}, "en"
        )
        assert status == 422, refused
        item = {
            "model": {"preset": "llama-2-7b"},
            "training": {"tokens": "1B", "global_batch_size": 64, "sequence_length": 4096},
            "hardware": {"accelerator": "nvidia-a100-sxm-80gb", "count": 8},
        }
        impossible = {**item, "hardware": {"accelerator": "nvidia-a100-sxm-80gb", "count": 3}}
        answers = {}
        for language in ("es", "en"):
            status, batch = _post(
                server, "/v1/estimates/training/batch", {"items": [item, impossible]}, language
            )
            assert status == 200 and [r["status"] for r in batch["results"]] == [200, 422], batch
            answers[language] = batch["results"][0]["estimate"]["time"]
        assert answers["es"]["seconds"] == answers["en"]["seconds"]
        assert answers["es"]["human"] != answers["en"]["human"], answers
    finally:
        assert server.stop() == 0
