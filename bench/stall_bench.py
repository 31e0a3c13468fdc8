"""Can one client stall the service? /healthz and an ordinary estimate, timed while other clients send the
worst planner and batch requests, against a real gunicorn started as `make run` starts it.

    .venv/bin/python bench/stall_bench.py          # BENCH_SECONDS (30), BENCH_PLANS (8), BENCH_BATCHES (4),
                                                   # WEB_CONCURRENCY (2), BENCH_PORT (8781)

Load (issue 28): BENCH_PLANS clients each send, back to back, `POST /v1/plans/training` for Kimi K2 up to 65,536
devices over every pricing model and recomputation mode; BENCH_BATCHES clients send a batch of 1,000 training
estimates with `count` and `parallelism` "auto". Meanwhile one client probes `/healthz` every 50 ms and one sends
the README's 7B estimate every 100 ms. Prints p50/p99/max of both and what the heavy requests got. Every loop is
bounded in time; the server is stopped at the end. Only 127.0.0.1 is contacted.

Also (issue 28's smaller defects), off by default: BENCH_LISTINGS clients read `GET /v1/accelerators?page_size=100`
back to back after BENCH_LISTING_PRICES (8,000) regional prices were imported (pages were 1.1-3.4 MB), and
BENCH_IMPORTS admin clients send dry runs of a BENCH_IMPORT_OFFERS-offer (100,000) CSV price file.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SECONDS = float(os.environ.get("BENCH_SECONDS", "30"))
PLANS = int(os.environ.get("BENCH_PLANS", "8"))
BATCHES = int(os.environ.get("BENCH_BATCHES", "4"))
PORT = int(os.environ.get("BENCH_PORT", "8781"))
LISTINGS = int(os.environ.get("BENCH_LISTINGS", "0"))
LISTING_PRICES = int(os.environ.get("BENCH_LISTING_PRICES", "8000"))
IMPORTS = int(os.environ.get("BENCH_IMPORTS", "0"))
IMPORT_OFFERS = int(os.environ.get("BENCH_IMPORT_OFFERS", "100000"))
PRICE_HEADER = (
    "accelerator_id,provider,instance_type,accelerators_per_instance,region,pricing_model,"
    "usd_per_accelerator_hour,as_of,source,effective_from\n"
)
PRICED = ["nvidia-h100-sxm-80gb", "nvidia-a100-sxm-80gb", "nvidia-l4", "nvidia-h200-sxm-141gb", "amd-mi300x"]
BASE = f"http://127.0.0.1:{PORT}"

WORST_PLAN = {
    "model": {"preset": "kimi-k2"},
    "training": {"tokens": "15T", "global_batch_size": 4096, "sequence_length": 4096},
    "search": {
        "max_devices": 65536,
        "pricing_models": ["on-demand", "spot", "reserved-1y", "reserved-3y"],
        "recomputation": ["none", "selective", "selective_op", "full", "dots"],
    },
}
ITEM = {
    "model": {"preset": "llama-2-70b"},
    "training": {"tokens": "2T", "global_batch_size": 1024, "sequence_length": 4096},
    "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": "auto", "parallelism": "auto"},
    "constraints": {"deadline": "P60D"},
}
WORST_BATCH = {"items": [ITEM] * 1000}
ORDINARY = {
    "model": {"preset": "llama-2-7b"},
    "training": {"tokens": "1B", "global_batch_size": 64, "sequence_length": 4096},
    "hardware": {
        "accelerator": "nvidia-a100-sxm-80gb",
        "count": 8,
        "parallelism": {"data": 8, "zero_stage": 1},
    },
}


def call(
    method: str,
    path: str,
    body: dict | bytes | None = None,
    timeout: float = 120.0,
    headers: dict | None = None,
) -> tuple[int, float, bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(BASE + path, data=data, method=method, headers=headers or {})
    if data is not None and not isinstance(body, bytes):
        request.add_header("Content-Type", "application/json")
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            payload = response.read()
            return response.status, time.perf_counter() - started, payload
    except urllib.error.HTTPError as exc:
        return exc.code, time.perf_counter() - started, exc.read()
    except Exception:  # noqa: BLE001  # reset, empty reply, timeout: counted as status 0
        return 0, time.perf_counter() - started, b""


def start_server(workdir: Path) -> subprocess.Popen:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{workdir / 'bench.db'}",
        "PORT": str(PORT),
        "WEB_CONCURRENCY": os.environ.get("WEB_CONCURRENCY", "2"),
        "RATELIMIT_ENABLED": "false",
        "LOG_LEVEL": "WARNING",
    }
    for args in (["db", "upgrade"], ["catalog", "seed"]):
        subprocess.run([str(BIN / "scalecost"), *args], env=env, check=True, capture_output=True)
    if LISTINGS:
        (workdir / "regional.csv").write_bytes(price_file(LISTING_PRICES))
        imported = [
            str(BIN / "scalecost"),
            "prices",
            "import",
            str(workdir / "regional.csv"),
            "--source",
            "csv",
        ]
        subprocess.run(imported, env=env, check=True, capture_output=True)
    if IMPORTS:
        created = [str(BIN / "scalecost"), "keys", "create", "--name", "bench-admin", "--role", "admin"]
        key = subprocess.run(created, env=env, check=True, capture_output=True, text=True).stdout.split()[-1]
        ADMIN["Authorization"] = f"Bearer {key}"
    log = open(workdir / "gunicorn.log", "w")  # noqa: SIM115  # closed with the process
    proc = subprocess.Popen(
        [str(BIN / "gunicorn"), "-c", "service/gunicorn_conf.py", "scalecost:create_app()"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if call("GET", "/livez", timeout=1)[0] == 200 or call("GET", "/healthz", timeout=1)[0] == 200:
            return proc
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("gunicorn did not start: " + (workdir / "gunicorn.log").read_text()[-2000:])


ADMIN: dict[str, str] = {"Content-Type": "text/csv"}


def price_file(n: int) -> bytes:
    """n on-demand offers of a few accelerators over 2 providers and 500 regions, in the project's CSV format."""
    rows = [
        f"{PRICED[i % len(PRICED)]},regional-{i % 2},inst-{i},8,r{i % 500},on-demand,{1 + (i % 997) / 100:.4f},"
        f"2026-11,bench,2026-11-01\n"
        for i in range(n)
    ]
    return (PRICE_HEADER + "".join(rows)).encode()


def loop(
    stop: threading.Event,
    out: list,
    method: str,
    path: str,
    body: dict | bytes | None,
    pause: float,
    headers: dict | None = None,
) -> None:
    while not stop.is_set():
        status, seconds, payload = call(method, path, body, headers=headers)
        out.append((status, seconds, _summary(payload)))
        stop.wait(pause)


def _summary(payload: bytes) -> bytes:
    """What the report reads of an answer: search.complete (plans) or complete (batches)."""
    try:
        body = json.loads(payload)
    except ValueError:
        return b""
    complete = (
        body.get("complete", (body.get("search") or {}).get("complete")) if isinstance(body, dict) else None
    )
    return json.dumps({"complete": complete}).encode()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def describe(label: str, rows: list) -> None:
    times = [s * 1000 for _, s, _ in rows]
    statuses: dict[int, int] = {}
    for status, _, _ in rows:
        statuses[status] = statuses.get(status, 0) + 1
    print(
        f"| {label} | {len(rows)} | {statistics.median(times) if times else float('nan'):,.1f} | "
        f"{pct(times, 0.99):,.1f} | {max(times) if times else float('nan'):,.1f} | {statuses} |"
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        proc = start_server(Path(tmp))
        stop = threading.Event()
        health: list = []
        ordinary: list = []
        plans: list = []
        batches: list = []
        threads = [threading.Thread(target=loop, args=(stop, health, "GET", "/healthz", None, 0.05))]
        threads.append(
            threading.Thread(
                target=loop, args=(stop, ordinary, "POST", "/v1/estimates/training", ORDINARY, 0.1)
            )
        )
        threads += [
            threading.Thread(target=loop, args=(stop, plans, "POST", "/v1/plans/training", WORST_PLAN, 0.0))
            for _ in range(PLANS)
        ]
        threads += [
            threading.Thread(
                target=loop, args=(stop, batches, "POST", "/v1/estimates/training/batch", WORST_BATCH, 0.0)
            )
            for _ in range(BATCHES)
        ]
        listings: list = []
        imports: list = []
        threads += [
            threading.Thread(
                target=loop, args=(stop, listings, "GET", "/v1/accelerators?page_size=100", None, 0.0)
            )
            for _ in range(LISTINGS)
        ]
        dry_run = "/v1/price-imports?source=csv&dry_run=true"
        big = price_file(IMPORT_OFFERS) if IMPORTS else b""
        threads += [
            threading.Thread(target=loop, args=(stop, imports, "POST", dry_run, big, 0.0, ADMIN))
            for _ in range(IMPORTS)
        ]
        for thread in threads:
            thread.daemon = True
            thread.start()
        time.sleep(SECONDS)
        page_bytes = len(call("GET", "/v1/accelerators?page_size=100")[2]) if LISTINGS else 0
        stop.set()
        for thread in threads[:2]:
            thread.join(timeout=5)
        alive = proc.poll() is None
        proc.terminate()
        try:
            proc.wait(timeout=40)
        except subprocess.TimeoutExpired:
            proc.kill()
        killed = (Path(tmp) / "gunicorn.log").read_text().count("WORKER TIMEOUT")
    print(
        f"\n## One client cannot stall the service ({SECONDS:.0f} s, {PLANS} worst plans, {BATCHES} worst batches)\n"
    )
    print("| requests | n | p50 ms | p99 ms | max ms | statuses |")
    print("|---|---:|---:|---:|---:|---|")
    describe("GET /healthz", health)
    describe("POST /v1/estimates/training (7B)", ordinary)
    describe("POST /v1/plans/training (worst)", plans)
    describe("POST .../training/batch (1,000 auto items)", batches)
    if LISTINGS:
        describe(f"GET /v1/accelerators?page_size=100 ({LISTING_PRICES:,} prices)", listings)
        print(f"listing page bytes: {page_bytes:,}")
    if IMPORTS:
        describe(f"POST /v1/price-imports dry run ({IMPORT_OFFERS:,} offers)", imports)
    for label, rows in (("plans", plans), ("batches", batches)):
        complete = [json.loads(p)["complete"] for status, _, p in rows if status == 200 and p]
        print(f"{label} answered 200: complete {complete.count(True)}, incomplete {complete.count(False)}")
    print(f"server alive at the end: {alive}; workers killed by gunicorn's timeout: {killed}")


if __name__ == "__main__":
    main()
