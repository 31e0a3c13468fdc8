"""Listing benchmark at scale: GET /v1/scenarios with every documented filter and sort, 1 and 8 clients.

    make bench-listing                                           # 1,000,000 scenarios, local PostgreSQL
    .venv/bin/python bench/listing_bench.py --rows 100000        # smaller
    .venv/bin/python bench/listing_bench.py --schema listing_1m --keep   # seed once, reuse on later runs
    BENCH_SCHEMA=listing_1m BENCH_KEEP=1 make bench-listing              # the same through make

Set-up: a PostgreSQL schema in --url (default $BENCH_DATABASE_URL, else the local test database) — a
throwaway `bench_<hex>` dropped afterwards, or --schema NAME, created if missing and kept with --keep (a
later run with the same --schema reuses the rows it finds and only adds what is missing); a SQLite URL is
used as given. `scalecost` migrations to head, the catalog seed, then --rows scenarios through
`scalecost.store.scenarios.bulk_insert` (the store's bulk path: heads, tags, 'create' revisions, per-kind
totals) in batches of --batch, committed per batch, then VACUUM ANALYZE (the state autovacuum reaches
after a bulk load). The rows follow bench/load.py: names `{kind}-{i:07d}-{tag}`, 0–3 of 20 tags, 8 owners,
4:1 training:inference, dates over a year; the request, estimate, price snapshot and summary are one real
training and one real inference estimate (--content small stores an empty estimate instead, for quick runs).
Besides, one scenario in 100 carries a rare tag `team-NNN` (1,000 of them), for a selective tag filter.

Measurement: C client processes (C in --clients, default 1 and 8), each with its own app
(`create_app`, production configuration but no rate limit) and Flask test client — the whole request
inside the app (auth, query args, queries, serialisation, headers), without gunicorn and sockets. For each
case every client sends the request back to back for --seconds; the table gives p50 / p95 of all clients'
requests and the requests/s they achieved together, and any answer other than 200 (a 503 is the database's
statement timeout, DB_STATEMENT_TIMEOUT_MS = 5 s by default). A last column times the database part alone:
`scenarios.listing()` (count, page) as the view calls it, one client in this process, for --seconds / 2.
The machine's load average is printed: on a shared machine, a busy neighbour shows up as a higher p50 with
8 clients.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import multiprocessing as mp
import os
import platform
import queue
import random
import statistics
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import quote, urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from scalecost.store import migrate, scenario_listing  # noqa: E402
from scalecost.store import scenarios as scenario_store  # noqa: E402
from scalecost.store.models import Scenario  # noqa: E402
from scalecost.store.session import Database, make_engine, normalise_url  # noqa: E402
from sqlalchemy import func, select, text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

DEFAULT_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
TAGS = [
    "q1-budget",
    "q2-budget",
    "q3-budget",
    "q4-budget",
    "pretraining",
    "fine-tune",
    "rlhf",
    "eval",
    "research",
    "prod",
    "staging",
    "h100",
    "a100",
    "mi300x",
    "tpu",
    "long-context",
    "moe",
    "dense",
    "distillation",
    "serving",
]  # fmt: skip  (as bench/load.py)
OWNERS = ["bench", "alice", "bob", "carol", "dave", "erin", "platform-team", "research-team"]
PAGE_SIZE = 20
WAIT_S = 600  # a client that waits this long for the others at a barrier gives up


def log(message: str) -> None:
    print(f"[listing-bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------------------------- database


class BenchDatabase:
    def __init__(self, base: str, schema: str | None, keep: bool):
        self.base = normalise_url(base)
        self.schema = None
        self.keep = keep
        if make_url(self.base).get_backend_name() != "postgresql":
            self.url, self.kind = self.base, f"{make_url(self.base).get_backend_name()} ({self.base})"
            return
        self.schema = schema or f"bench_{uuid.uuid4().hex[:12]}"
        self.keep = keep and schema is not None
        engine = make_engine(self.base, single_use=True)
        with engine.begin() as conn:
            version = conn.execute(text("SHOW server_version")).scalar()
            conn.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"'))
        engine.dispose()
        sep = "&" if "?" in self.base else "?"
        self.url = f"{self.base}{sep}options={quote(f'-csearch_path={self.schema}')}"
        self.kind = f"PostgreSQL {version} at {make_url(self.base).host}, schema {self.schema}"

    def drop(self) -> None:
        if self.schema is None or self.keep:
            return
        engine = make_engine(self.base, single_use=True)
        with engine.begin() as conn:
            conn.execute(text(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE'))
        engine.dispose()


def contents(url: str, small: bool) -> dict[str, dict]:
    if small:
        return {
            k: {"request": {}, "estimate": {}, "prices": {}, "summary": {}} for k in ("training", "inference")
        }
    # bench/load.py: one real estimate per kind, as POST /v1/scenarios saves it
    from load import real_estimates

    return real_estimates(url)


def seed(database: Database, rows: int, batch: int, small: bool) -> tuple[int, float]:
    """Add scenarios until there are `rows`; returns (added, seconds)."""
    with database.transaction() as session:
        have = session.scalar(select(func.count()).select_from(Scenario)) or 0
        if have == 0:
            from scalecost.store.seeding import seed_catalog

            seed_catalog(session)
    if have >= rows:
        return 0, 0.0
    content = contents(database.url, small)
    started = time.perf_counter()
    now = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
    for first in range(have, rows, batch):
        rng = random.Random(first)  # per batch: a resumed seed writes what an uninterrupted one would
        chunk = []
        for i in range(first, min(first + batch, rows)):
            kind = "inference" if i % 5 == 4 else "training"
            tags = rng.sample(TAGS, rng.randint(0, 3))
            if i % 100 == 7:
                tags.append(f"team-{rng.randrange(1000):03d}")
            created = now - dt.timedelta(seconds=rng.uniform(3600, 365 * 86400))
            chunk.append(
                {
                    "name": f"{kind}-{i:07d}-{rng.choice(TAGS)}",
                    "description": None if i % 3 else f"Budget scenario {i} for the {tags[:1]} review.",
                    "kind": kind,
                    "tags": tags,
                    **content[kind],
                    "owner": rng.choice(OWNERS),
                    "created_at": created,
                    "updated_at": min(now, created + dt.timedelta(seconds=rng.uniform(0, 30 * 86400))),
                }
            )
        with database.transaction() as session:
            scenario_store.bulk_insert(session, chunk)
        done = min(first + batch, rows)
        if (done - have) % (batch * 20) == 0 or done == rows:
            rate = (done - have) / (time.perf_counter() - started)
            log(f"seeded {done:,} / {rows:,} ({rate:,.0f} rows/s)")
    return rows - have, time.perf_counter() - started


def vacuum(database: Database) -> None:
    if database.engine.dialect.name != "postgresql":
        return
    with database.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("VACUUM ANALYZE scenarios, scenario_tags, scenario_totals"))


def make_viewer_key(database: Database) -> str:
    from scalecost.store import keys

    with database.transaction() as session:
        _key, secret = keys.create(session, f"listing-bench-{uuid.uuid4().hex[:8]}", "viewer", actor="bench")
    return secret


# ------------------------------------------------------------------------------------------------- cases


def cases(client, auth: dict, total: int) -> list[tuple[str, str]]:
    """(label, path) per documented filter and sort, with the deep pages; cursors are fetched here."""
    last = max(1, -(-total // PAGE_SIZE))
    middle = max(1, last // 2)

    def path(**query) -> str:
        return "/v1/scenarios?" + urlencode({**query, "page_size": PAGE_SIZE})

    out = [
        ("no filter, sort=-updated_at (default)", path()),
        ("sort=updated_at", path(sort="updated_at")),
        ("sort=name", path(sort="name")),
        ("sort=-name", path(sort="-name")),
        ("kind=inference", path(kind="inference")),
        ("owner=carol", path(owner="carol")),
        ("tag=rlhf (≈ 7 % of rows)", path(tag="rlhf")),
        ("tag=team-042 (≈ 0.001 %)", path(tag="team-042")),
        ("name=q3-budget (≈ 5 %)", path(name="q3-budget")),
        ("name=inference (20 %)", path(name="inference")),
        ("name=0424242 (1 row)", path(name="0424242")),
        ("name=q3-budget&sort=name", path(name="q3-budget", sort="name")),
        ("kind=training&owner=alice&tag=eval", path(kind="training", owner="alice", tag="eval")),
        (f"page={last} (last, offset {(last - 1) * PAGE_SIZE:,})", path(page=last)),
        (f"page={middle} (middle, offset {(middle - 1) * PAGE_SIZE:,})", path(page=middle)),
    ]
    # Keyset pages: the cursor that the middle page hands out for the page after it (with a filter: the
    # same position, which its listing continues from).
    reply = client.get(path(page=middle), headers=auth)
    cursor = json.loads(reply.headers.get("X-Pagination") or "{}").get("next_cursor")
    named = client.get(path(page=middle, sort="name"), headers=auth)
    name_cursor = json.loads(named.headers.get("X-Pagination") or "{}").get("next_cursor")
    for label, query, after in (
        ("", {}, cursor),
        (", tag=rlhf", {"tag": "rlhf"}, cursor),
        (", name=q3-budget", {"name": "q3-budget"}, cursor),
        (", sort=name", {"sort": "name"}, name_cursor),
    ):
        out.append((f"cursor after page {middle}{label}", path(cursor=after, **query) if after else ""))
    return out


def _client_process(url: str, secret: str, paths: list[str], seconds: float, barrier, results) -> None:
    from scalecost import create_app

    app = create_app({"DATABASE_URL": url, "RATELIMIT_ENABLED": False, "LOG_LEVEL": "WARNING"})
    client = app.test_client()
    auth = {"Authorization": f"Bearer {secret}"}
    out: list[tuple[list[float], dict[int, int]]] = []
    for p in paths:
        for _ in range(3):  # warm-up: connection, plan cache, pages in memory
            if p:
                client.get(p, headers=auth)
        barrier.wait(timeout=WAIT_S)
        timings: list[float] = []
        failures: dict[int, int] = {}
        if p:
            stop = time.perf_counter() + seconds
            while (start := time.perf_counter()) < stop:
                status = client.get(p, headers=auth).status_code
                timings.append((time.perf_counter() - start) * 1000)
                if status != 200:  # e.g. 503 when DB_STATEMENT_TIMEOUT_MS (5 s) cancels the query
                    failures[status] = failures.get(status, 0) + 1
        out.append((timings, failures))
        barrier.wait(timeout=WAIT_S)
    results.put(out)
    app.extensions["scalecost.db"].dispose()


def measure(
    url: str, secret: str, paths: list[str], clients: int, seconds: float, wait_quiet_s: float = 0
) -> list[tuple[list[float], dict[int, int]]]:
    """Every case with `clients` processes. This process takes part in the barriers, so that with
    wait_quiet_s it holds each case back until the machine has been idle for 3 s (shared machines)."""
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(clients + 1), ctx.Queue()
    procs = [
        ctx.Process(target=_client_process, args=(url, secret, paths, seconds, barrier, results))
        for _ in range(clients)
    ]
    for proc in procs:
        proc.start()
    for _ in paths:
        if wait_quiet_s:
            wait_quiet(wait_quiet_s)
        barrier.wait(timeout=WAIT_S)  # start
        barrier.wait(timeout=WAIT_S)  # every client has finished the case
    merged: list[tuple[list[float], dict[int, int]]] = [([], {}) for _ in paths]
    for _ in procs:
        try:
            answer = results.get(timeout=WAIT_S + len(paths) * (seconds + 60))
        except queue.Empty:
            for proc in procs:
                proc.terminate()  # a client died: the others would wait at the barrier for ever
            raise SystemExit("a client process gave no result") from None
        for i, (timings, failures) in enumerate(answer):
            merged[i][0].extend(timings)
            for status, n in failures.items():
                merged[i][1][status] = merged[i][1].get(status, 0) + n
    for proc in procs:
        proc.join()
        if proc.exitcode:
            raise SystemExit(f"a client process failed (exit {proc.exitcode})")
    return merged


def wait_quiet(max_s: float) -> None:
    """Wait (up to max_s) for a 3-second window in which the machine is at least 90 % idle."""
    from load import machine_busy_s

    deadline = time.monotonic() + max_s
    while time.monotonic() < deadline:
        busy0, t0 = machine_busy_s(), time.monotonic()
        time.sleep(3)
        if (machine_busy_s() - busy0) / (time.monotonic() - t0) <= 0.1 * (os.cpu_count() or 1):
            return
    log(f"machine still busy after {max_s:.0f} s; measuring anyway")


def store_timings(url: str, paths: list[str], seconds: float) -> list[list[float]]:
    """The database part alone: `scenarios.listing()` as the view calls it, one client, no Flask."""
    from urllib.parse import parse_qsl, urlsplit

    listing = getattr(scenario_store, "listing", None)
    database = Database(url)
    out: list[list[float]] = []
    for p in paths:
        timings: list[float] = []
        if p and listing is not None:
            args = dict(parse_qsl(urlsplit(p).query))
            size = int(args.pop("page_size", PAGE_SIZE))
            offset = (int(args.pop("page", 1)) - 1) * size
            cursor = args.pop("cursor", None)
            after = scenario_listing.decode_cursor(cursor) if cursor else None
            stop = time.perf_counter() + seconds
            for warm in (True, True, False):
                while warm or time.perf_counter() < stop:
                    with database.session() as session:
                        start = time.perf_counter()
                        listing(session, **args, offset=offset, limit=size, after=after)
                        elapsed = (time.perf_counter() - start) * 1000
                    if warm:
                        break
                    timings.append(elapsed)
        out.append(timings)
    database.dispose()
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# -------------------------------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=int(os.environ.get("BENCH_ROWS", "1000000")))
    parser.add_argument("--url", default=os.environ.get("BENCH_DATABASE_URL") or DEFAULT_URL)
    parser.add_argument("--schema", default=os.environ.get("BENCH_SCHEMA"), help="PostgreSQL schema to use")
    parser.add_argument(
        "--keep",
        action="store_true",
        default=os.environ.get("BENCH_KEEP") == "1",
        help="keep --schema afterwards (reuse it next time); or BENCH_KEEP=1",
    )
    parser.add_argument("--clients", default="1,8")
    parser.add_argument("--seconds", type=float, default=float(os.environ.get("BENCH_SECONDS", "4")))
    parser.add_argument("--batch", type=int, default=5000)
    parser.add_argument("--content", choices=("real", "small"), default="real")
    parser.add_argument("--only", default="", help="comma list of substrings of case labels")
    parser.add_argument(
        "--wait-quiet",
        type=float,
        default=float(os.environ.get("BENCH_WAIT_QUIET", "0")),
        help="seconds to wait, before each case, for the machine to be idle (shared machines)",
    )
    args = parser.parse_args()

    bench_db = BenchDatabase(args.url, args.schema, args.keep)
    log(bench_db.kind)
    try:
        migrate.upgrade(bench_db.url)
        database = Database(bench_db.url)
        added, seconds = seed(database, args.rows, args.batch, args.content == "small")
        if added:
            log(f"seeded {added:,} scenarios in {seconds:.0f} s; VACUUM ANALYZE")
        vacuum(database)
        with database.transaction() as session:
            total = session.scalar(select(func.count()).select_from(Scenario)) or 0
        secret = make_viewer_key(database)
        database.dispose()

        from scalecost import create_app

        app = create_app({"DATABASE_URL": bench_db.url, "RATELIMIT_ENABLED": False, "LOG_LEVEL": "WARNING"})
        with app.app_context():
            todo = cases(app.test_client(), {"Authorization": f"Bearer {secret}"}, total)
        app.extensions["scalecost.db"].dispose()
        if args.only:
            wanted = [w.strip() for w in args.only.split(",") if w.strip()]
            todo = [c for c in todo if any(w in c[0] for w in wanted)]

        counts = [int(c) for c in args.clients.split(",")]
        table: dict[int, list[tuple[list[float], dict[int, int]]]] = {}
        for clients in counts:
            log(f"{clients} client(s): {len(todo)} cases × {args.seconds:g} s")
            paths = [p for _, p in todo]
            table[clients] = measure(bench_db.url, secret, paths, clients, args.seconds, args.wait_quiet)
            log(f"load average after the {clients}-client runs: {os.getloadavg()}")
        log(f"the store alone: {len(todo)} cases × {args.seconds / 2:g} s")
        alone = store_timings(bench_db.url, [p for _, p in todo], args.seconds / 2)

        print(f"\n{total:,} scenarios · {bench_db.kind} · {platform.python_version()} · "
              f"{os.cpu_count()} CPUs · page_size={PAGE_SIZE} · {args.seconds:g} s per case")  # fmt: skip
        head = "| case | " + " | ".join(
            f"{c} client{'s' if c > 1 else ''} p50 / p95 ms (req/s)" for c in counts
        )
        print(head + " | store alone p50 / p95 ms |")
        print("|---|" + "---:|" * (len(counts) + 1))
        for i, (label, p) in enumerate(todo):
            cells = []
            for c in counts:
                timings, failures = table[c][i]
                if not p or not timings:
                    cells.append("n/a")
                    continue
                rps = len(timings) / args.seconds
                cell = f"{statistics.median(timings):.1f} / {percentile(timings, 0.95):.1f} ({rps:.0f})"
                if failures:
                    cell += " " + ", ".join(f"{n}× {status}" for status, n in sorted(failures.items()))
                cells.append(cell)
            db = alone[i]
            cells.append(f"{statistics.median(db):.1f} / {percentile(db, 0.95):.1f}" if db else "n/a")
            print(f"| {label} | " + " | ".join(cells) + " |")
    finally:
        bench_db.drop()


if __name__ == "__main__":
    main()
