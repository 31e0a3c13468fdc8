"""Load benchmark of the real server: gunicorn with service/gunicorn_conf.py, driven by locust.

    make bench                                   # or: .venv/bin/python bench/load.py
    BENCH_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5432/test make bench
    BENCH_SCENARIOS=100000 BENCH_ONLY=healthz,list .venv/bin/python bench/load.py

Set-up: a throwaway database (a temporary SQLite file, or a fresh schema in BENCH_DATABASE_URL that is
dropped afterwards), `scalecost db upgrade`, `scalecost catalog seed`, an editor key from
`scalecost keys create`, BENCH_SCENARIOS saved scenarios inserted in bulk (one real estimate reused with
varied names, tags, kinds, owners and dates), then gunicorn, then a few scenarios saved over HTTP for the
PUT run. Locust runs in a separate process, once per endpoint, and the table compares each endpoint's
requests/s with GET /healthz measured in the same run.

Environment: BENCH_SECONDS (15) and BENCH_USERS (8) per run, BENCH_SCENARIOS (10000), WEB_CONCURRENCY (2),
BENCH_DATABASE_URL (unset = SQLite), BENCH_PUT_SCENARIOS (64), BENCH_ONLY (comma list of
healthz,training,training70b,inference,list,put), BENCH_RETRIES (0: re-run an endpoint up to N times while other
processes take CPU, keeping the quietest run), BENCH_WAIT_QUIET (0: seconds to wait, before each run,
for the machine to be idle; for shared machines), BENCH_KEEP=1 keeps the temporary directory (logs, CSVs).
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import math
import os
import platform
import random
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import locustfile as lf  # noqa: E402  (request bodies and names shared with the locust users)
import requests  # noqa: E402
from scalecost.store import scenarios as scenario_store  # noqa: E402
from scalecost.store.models import Scenario, ScenarioRevision, ScenarioTag  # noqa: E402
from scalecost.store.session import make_engine, normalise_url  # noqa: E402
from sqlalchemy import func, insert, select, text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402
from sqlalchemy.orm import Session  # noqa: E402

SECONDS = int(os.environ.get("BENCH_SECONDS", "15"))
USERS = int(os.environ.get("BENCH_USERS", "8"))
SCENARIOS = int(os.environ.get("BENCH_SCENARIOS", "10000"))
WORKERS = os.environ.get("WEB_CONCURRENCY", "2")
PUT_SCENARIOS = int(os.environ.get("BENCH_PUT_SCENARIOS", "64"))
RETRIES = int(os.environ.get("BENCH_RETRIES", "0"))  # re-run an endpoint when other processes were busy
WAIT_QUIET = float(os.environ.get("BENCH_WAIT_QUIET", "0"))  # seconds to wait for an idle machine per run
NOISE_CORES = 0.15
BATCH = 2000

# (key, locust user class, request name in the stats, label in the table)
RUNS = [
    ("healthz", "Healthz", lf.HEALTHZ, "GET /healthz"),
    ("training", "TrainingEstimate", lf.TRAINING_NAME, "POST /v1/estimates/training"),
    (
        "training70b",
        "ReadmeTrainingEstimate",
        lf.README_TRAINING_NAME,
        "POST /v1/estimates/training (README 70B)",
    ),
    ("inference", "InferenceEstimate", lf.INFERENCE_NAME, "POST /v1/estimates/inference (+suggestions)"),
    ("list", "ScenarioList", lf.LIST_NAME, "GET /v1/scenarios?page=rand&page_size=20"),
    ("put", "ScenarioPut", lf.PUT_NAME, "PUT /v1/scenarios/{id} (If-Match)"),
]
EXTRA_ROWS = {"put": [(lf.PUT_GET_NAME, "↳ GET /v1/scenarios/{id} before each PUT")]}
# The same requests as the app's own access log sees them (method, path): time inside Flask, no queueing.
ACCESS = {
    lf.HEALTHZ: ("GET", re.compile(r"/healthz$")),
    lf.TRAINING_NAME: ("POST", re.compile(r"/v1/estimates/training$")),
    lf.README_TRAINING_NAME: ("POST", re.compile(r"/v1/estimates/training$")),  # its own run: lines don't mix
    lf.INFERENCE_NAME: ("POST", re.compile(r"/v1/estimates/inference$")),
    lf.LIST_NAME: ("GET", re.compile(r"/v1/scenarios$")),
    lf.PUT_NAME: ("PUT", re.compile(r"/v1/scenarios/\d+$")),
    lf.PUT_GET_NAME: ("GET", re.compile(r"/v1/scenarios/\d+$")),
}

TAGS = ["q1-budget", "q2-budget", "q3-budget", "q4-budget", "pretraining", "fine-tune", "rlhf", "eval",
        "research", "prod", "staging", "h100", "a100", "mi300x", "tpu", "long-context", "moe", "dense",
        "distillation", "serving"]  # fmt: skip
OWNERS = ["bench", "alice", "bob", "carol", "dave", "erin", "platform-team", "research-team"]


def tool(name: str) -> str:
    """A console script of this virtual environment (falls back to PATH)."""
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else (shutil.which(name) or name)


TICK = os.sysconf("SC_CLK_TCK")


def machine_busy_s() -> float:
    """CPU seconds the whole machine has been busy (all cores; /proc/stat)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:9]]
    return (sum(fields) - fields[3] - fields[4]) / TICK


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of a process and its children (the gunicorn master and its workers)."""
    total = 0.0
    pids = [pid]
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            pids += [int(c) for c in f.read().split()]
    except OSError:
        pass
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / TICK
        except (OSError, IndexError, ValueError):
            pass
    return total


def postgres_cpu_s() -> float:
    """CPU seconds of every local `postgres` process (0 without a local server). The children's times
    (cutime, cstime) count the backends and parallel workers that exited, which the postmaster reaps."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "comm").read_text().strip() != "postgres":
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15]) / TICK
        except (OSError, IndexError, ValueError):
            continue
    return total


def wait_quiet(max_s: float) -> None:
    """Wait (up to max_s) for a 3-second window in which the machine is at least 90 % idle."""
    deadline = time.monotonic() + max_s
    while time.monotonic() < deadline:
        busy0, t0 = machine_busy_s(), time.monotonic()
        time.sleep(3)
        busy = (machine_busy_s() - busy0) / (time.monotonic() - t0)
        if busy <= 0.1 * (os.cpu_count() or 1):
            return
    log(f"machine still busy after {max_s:.0f} s; running anyway")


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------- database


class TempDatabase:
    """A temporary SQLite file, or a throwaway schema in BENCH_DATABASE_URL (PostgreSQL)."""

    def __init__(self, workdir: Path):
        base = os.environ.get("BENCH_DATABASE_URL", "").strip()
        self.schema: str | None = None
        self.base = normalise_url(base) if base else None
        if not base:
            self.url = f"sqlite:///{workdir / 'bench.db'}"
            self.kind = "SQLite (temporary file, WAL)"
        elif make_url(self.base).get_backend_name() == "postgresql":
            self.schema = f"bench_{uuid.uuid4().hex[:12]}"
            engine = make_engine(self.base, single_use=True)
            with engine.begin() as conn:
                version = conn.execute(text("SHOW server_version")).scalar()
                conn.execute(text(f'CREATE SCHEMA "{self.schema}"'))
            engine.dispose()
            sep = "&" if "?" in self.base else "?"
            self.url = f"{self.base}{sep}options={quote(f'-csearch_path={self.schema}')}"
            host = make_url(self.base).host
            self.kind = f"PostgreSQL {version} at {host} (throwaway schema {self.schema})"
        else:
            self.url = base
            self.kind = f"{make_url(self.base).get_backend_name()} (BENCH_DATABASE_URL as given)"

    def drop(self) -> None:
        if self.schema is None:
            return
        engine = make_engine(self.base, single_use=True)
        with engine.begin() as conn:
            conn.execute(text(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE'))
        engine.dispose()


def cli(*args: str) -> str:
    result = subprocess.run([tool("scalecost"), *args], capture_output=True, text=True, cwd=ROOT, check=False)
    if result.returncode != 0:
        raise SystemExit(f"scalecost {' '.join(args[:2])} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def real_estimates(url: str) -> dict[str, dict]:
    """One real training and one real inference estimate, exactly as POST /v1/scenarios stores them (the bodies
    loaded as the endpoint loads them: bench/bodies.py; the estimate use case on the seeded catalog)."""
    from bodies import as_loaded
    from scalecost.store.session import Database
    from scalecost.usecases import estimates

    database = Database(url)
    out = {}
    session = database.session()
    try:
        for kind, body in (("training", lf.TRAINING), ("inference", lf.INFERENCE)):
            loaded = as_loaded(body)
            estimate = json.loads(json.dumps(estimates.estimate(kind, loaded, session)))
            out[kind] = {
                "request": body,
                "estimate": estimate,
                "prices": estimates.price_snapshot(kind, loaded, estimate),
                "summary": estimates.summary(kind, loaded, estimate),
            }
    finally:
        session.close()
        database.dispose()
    return out


def seed_scenarios(url: str, count: int) -> float:
    """Insert `count` scenarios with their tags and 'create' revisions in bulk; returns seconds taken."""
    started = time.perf_counter()
    content = real_estimates(url)
    rng = random.Random(20240601)
    now = dt.datetime.now(dt.UTC)
    engine = make_engine(url, single_use=True)
    with engine.begin() as conn:
        for first in range(0, count, BATCH):
            heads = []
            for i in range(first, min(first + BATCH, count)):
                kind = "inference" if i % 5 == 4 else "training"
                c = content[kind]
                created = now - dt.timedelta(seconds=rng.uniform(3600, 365 * 86400))
                updated = min(now, created + dt.timedelta(seconds=rng.uniform(0, 30 * 86400)))
                tags = rng.sample(TAGS, rng.randint(0, 3))
                owner = rng.choice(OWNERS)
                heads.append(
                    {
                        "name": f"{kind}-{i:07d}-{rng.choice(TAGS)}",
                        "description": None if i % 3 else f"Budget scenario {i} for the {tags[:1]} review.",
                        "kind": kind,
                        "tags": tags,
                        "request": c["request"],
                        "estimate": c["estimate"],
                        "prices": c["prices"],
                        "summary": c["summary"],
                        "owner": owner,
                        "version": 1,
                        "created_at": created,
                        "updated_at": updated,
                    }
                )
            ids = (
                conn.execute(insert(Scenario).returning(Scenario.id, sort_by_parameter_order=True), heads)
                .scalars()
                .all()
            )
            tag_rows = [
                {"scenario_id": sid, "tag": t} for sid, h in zip(ids, heads, strict=True) for t in h["tags"]
            ]
            revisions = [
                {
                    "scenario_id": sid,
                    "revision": 1,
                    "action": "create",
                    "author": h["owner"],
                    "request_id": None,
                    "created_at": h["created_at"],
                    **{
                        f: h[f]
                        for f in ("name", "description", "kind", "tags", "request", "estimate", "prices")
                    },
                }
                for sid, h in zip(ids, heads, strict=True)
            ]
            if tag_rows:
                conn.execute(insert(ScenarioTag), tag_rows)
            conn.execute(insert(ScenarioRevision), revisions)
    with Session(engine) as session, session.begin():
        scenario_store.recount(session)  # the bulk load bypassed create(): rebuild the per-kind totals
    if engine.dialect.name == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            # the steady state autovacuum reaches after a bulk load (only this schema's tables)
            conn.execute(text("VACUUM ANALYZE scenarios, scenario_tags, scenario_revisions"))
    engine.dispose()
    return time.perf_counter() - started


def scenario_count(url: str) -> int:
    engine = make_engine(url, single_use=True)
    with engine.connect() as conn:
        n = conn.execute(select(func.count()).select_from(Scenario)).scalar_one()
    engine.dispose()
    return n


# ----------------------------------------------------------------------------------------------- server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """gunicorn -c service/gunicorn_conf.py 'scalecost:create_app()' with the production settings."""

    def __init__(self, url: str, workdir: Path):
        self.port = free_port()
        self.host = f"http://127.0.0.1:{self.port}"
        self.log_path = workdir / "gunicorn.log"
        env = {
            **os.environ,
            "PORT": str(self.port),
            "WEB_CONCURRENCY": WORKERS,
            "DATABASE_URL": url,
            # The bench sends every write from one key: lift the per-client write limit so that it measures
            # the endpoint, not the limiter's 429s (the limiter itself still runs on every write).
            "RATELIMIT_WRITES": os.environ.get("BENCH_RATELIMIT_WRITES", "1000000 per minute"),
            "RATELIMIT_ESTIMATES": os.environ.get("BENCH_RATELIMIT_ESTIMATES", "1000000 per minute"),
        }
        self.log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [tool("gunicorn"), "-c", "service/gunicorn_conf.py", "scalecost:create_app()"],
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"gunicorn exited with {self.proc.returncode}; see {self.log_path}")
            try:
                if requests.get(f"{self.host}/healthz", timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.2)
        raise SystemExit(f"gunicorn not ready after {timeout:.0f} s; see {self.log_path}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def create_put_targets(host: str, key: str, count: int) -> list[int]:
    """Scenarios saved through the API (full path: estimate, revision, ETag) for the PUT run."""
    ids = []
    with requests.Session() as http:
        http.headers["Authorization"] = f"Bearer {key}"
        for i in range(count):
            body = {
                "name": f"bench-put-{i:04d}",
                "kind": "training",
                "tags": ["bench"],
                "request": lf.TRAINING,
            }
            response = http.post(f"{host}/v1/scenarios", json=body, timeout=30)
            if response.status_code != 201:
                raise SystemExit(f"POST /v1/scenarios: {response.status_code} {response.text[:500]}")
            ids.append(response.json()["id"])
    return ids


# ----------------------------------------------------------------------------------------------- locust


def run_locust(user_class: str, server: Server, workdir: Path, env: dict[str, str]) -> tuple[Path, dict]:
    """One headless locust run; returns its _stats.csv and the cores used by server, locust and the rest."""
    host = server.host
    prefix = workdir / user_class
    cmd = [
        tool("locust"), "-f", str(ROOT / "bench" / "locustfile.py"), "--headless",
        "-u", str(USERS), "-r", str(USERS), "-t", f"{SECONDS}s", "--host", host,
        "--csv", str(prefix), "--only-summary", "--loglevel", "WARNING", user_class,
    ]  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    machine0, server0, pg0 = machine_busy_s(), tree_cpu_s(server.proc.pid), postgres_cpu_s()
    started = time.perf_counter()
    with open(workdir / f"{user_class}.locust.log", "wb") as out:
        subprocess.run(
            cmd, cwd=ROOT, env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT, check=False
        )
    wall = time.perf_counter() - started
    machine1, server1, pg1 = machine_busy_s(), tree_cpu_s(server.proc.pid), postgres_cpu_s()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    client = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    cores = {"server": (server1 - server0) / wall, "locust": client / wall, "postgres": (pg1 - pg0) / wall}
    cores["other"] = max(0.0, (machine1 - machine0) / wall - sum(cores.values()))
    stats = Path(f"{prefix}_stats.csv")
    if not stats.exists():
        raise SystemExit(f"locust wrote no stats; see {workdir / f'{user_class}.locust.log'}")
    return stats, cores


def access_times(log_path: Path, offset: int) -> tuple[dict[str, list[float]], int]:
    """duration_ms of the app's access-log lines written since `offset`, by locust request name."""
    out: dict[str, list[float]] = {name: [] for name in ACCESS}
    with open(log_path, "rb") as f:
        f.seek(offset)
        data = f.read()
    for line in data.splitlines():
        if not line.startswith(b"{"):
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        for name, (method, path) in ACCESS.items():
            if entry.get("method") == method and path.search(entry.get("path", "")):
                out[name].append(float(entry["duration_ms"]))
    return out, offset + len(data)


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))]


def read_stats(path: Path) -> dict[str, dict[str, str]]:
    with open(path, newline="") as f:
        return {row["Name"]: row for row in csv.DictReader(f)}


def figures(row: dict[str, str] | None, app_ms: list[float]) -> dict[str, float] | None:
    if row is None or int(row["Request Count"]) == 0:
        return None
    return {
        "app_p50": percentile(app_ms, 0.5),
        "app_p99": percentile(app_ms, 0.99),
        "rps": float(row["Requests/s"]),
        "p50": float(row["50%"]),
        "p99": float(row["99%"]),
        "requests": int(row["Request Count"]),
        "failures": int(row["Failure Count"]),
    }


def environment(db: TempDatabase, scenarios: int, seed_s: float) -> list[str]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import locust

    try:
        commit = subprocess.run(
            ["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError:
        commit = ""
    return [
        f"- code: {commit or 'unknown'} ({dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC)",
        f"- cores: {os.cpu_count()} ({cpu}); load generator (locust) on the same machine",
        f"- server: gunicorn -c service/gunicorn_conf.py, {WORKERS} sync workers, "
        f"{os.environ.get('GUNICORN_THREADS', '1')} thread(s) each, access log "
        + ("on" if os.environ.get("LOG_LEVEL", "INFO").upper() in ("INFO", "DEBUG") else "off"),
        f"- database: {db.kind}",
        f"- scenarios in the database: {scenarios:,} (bulk insert took {seed_s:.1f} s)",
        f"- locust {locust.__version__}: {USERS} user{'s' if USERS != 1 else ''}, no think time, {SECONDS} s per endpoint; "
        f"Python {platform.python_version()}",
    ]


def main() -> None:
    only = {k.strip() for k in os.environ.get("BENCH_ONLY", "").split(",") if k.strip()}
    runs = [r for r in RUNS if not only or r[0] in only or r[0] == "healthz"]
    workdir = Path(tempfile.mkdtemp(prefix="scalecost-bench-"))
    db = TempDatabase(workdir)
    server = None
    try:
        log(f"database: {db.kind}")
        cli("db", "upgrade", "--url", db.url)
        cli("catalog", "seed", "--url", db.url)
        key = (
            cli("keys", "create", "--name", "bench", "--role", "editor", "--url", db.url)
            .strip()
            .splitlines()[-1]
        )
        log(f"seeding {SCENARIOS:,} scenarios …")
        seed_s = seed_scenarios(db.url, SCENARIOS)
        log(f"seeded in {seed_s:.1f} s; starting gunicorn ({WORKERS} workers)")
        server = Server(db.url, workdir)
        server.wait_ready()
        put_ids = (
            create_put_targets(server.host, key, PUT_SCENARIOS) if any(r[0] == "put" for r in runs) else []
        )
        total = scenario_count(db.url)
        env = {
            "BENCH_API_KEY": key,
            "BENCH_LIST_PAGES": str(max(1, math.ceil(total / lf.LIST_PAGE_SIZE))),
            "BENCH_PUT_IDS": ",".join(map(str, put_ids)),
            "BENCH_USERS": str(USERS),
        }
        results: list[tuple[str, dict[str, float] | None]] = []
        client_cpu: list[tuple[str, dict]] = []
        _, offset = access_times(server.log_path, 0)
        for name, user_class, request_name, label in runs:
            best = None
            for attempt in range(1 + RETRIES):
                if WAIT_QUIET:
                    wait_quiet(WAIT_QUIET)
                log(
                    f"locust {user_class}: {USERS} users × {SECONDS} s"
                    + (f" (retry {attempt})" if attempt else "")
                )
                stats_path, cores = run_locust(user_class, server, workdir, env)
                app, offset = access_times(server.log_path, offset)
                if best is None or cores["other"] < best[1]["other"]:
                    best = (read_stats(stats_path), cores, app)
                if cores["other"] <= NOISE_CORES:
                    break
                log(f"other processes used {cores['other']:.2f} cores during the run")
            stats, cores, app = best
            client_cpu.append((name, cores))
            results.append((label, figures(stats.get(request_name), app[request_name])))
            for extra_name, extra_label in EXTRA_ROWS.get(name, []):
                results.append((extra_label, figures(stats.get(extra_name), app[extra_name])))
        print_report(environment(db, total, seed_s), results, client_cpu)
    finally:
        if server is not None:
            server.stop()
        db.drop()
        if os.environ.get("BENCH_KEEP"):
            log(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def print_report(
    env_lines: list[str], results: list[tuple[str, dict[str, float] | None]], cpu: list[tuple[str, dict]]
) -> None:
    base = results[0][1]["rps"] if results and results[0][1] else None
    print("\n## Load (gunicorn + locust)\n")
    print("\n".join(env_lines))
    print()
    print(
        "| endpoint | requests/s | p50 ms | p99 ms | failures | ratio to /healthz rps | in-app p50 / p99 ms |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, f in results:
        if f is None:
            print(f"| {label} | – | – | – | no requests | – | – |")
            continue
        ratio = f"{f['rps'] / base:.2f}" if base else "–"
        fails = f"{f['failures']} / {f['requests']}"
        app = "–" if f["app_p50"] is None else f"{f['app_p50']:.1f} / {f['app_p99']:.1f}"
        print(f"| {label} | {f['rps']:.1f} | {f['p50']:.0f} | {f['p99']:.0f} | {fails} | {ratio} | {app} |")
    print(
        "\nrequests/s, p50, p99 and failures: locust's _stats.csv (client side, whole milliseconds, so they "
        f"include queueing: {USERS} users share {WORKERS} workers). In-app: duration_ms of the service's access "
        "log (Flask before_request to after_request; no socket, gunicorn or queueing time). The PUT user sends "
        "the GET below it before each PUT, so the two share that run's time."
    )
    print(
        f"\nCores busy during each run (of {os.cpu_count()}), gunicorn / locust / postgres / anything else: "
        + "; ".join(
            f"{n} {c['server']:.2f} / {c['locust']:.2f} / {c['postgres']:.2f} / {c['other']:.2f}"
            for n, c in cpu
        )
        + "."
    )
    noisy = [n for n, c in cpu if c["other"] > NOISE_CORES]
    if noisy:
        print(
            f"WARNING: other processes used CPU during {', '.join(noisy)}: those figures understate the "
            "service. Re-run on a quiet machine."
        )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
