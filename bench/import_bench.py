"""Price import benchmark: dry run and apply of N-row price files through the use case (usecases/price_imports.run).

    .venv/bin/python bench/import_bench.py                          # 2.5k, 5k, 10k, 20k, 100k rows, temp SQLite
    .venv/bin/python bench/import_bench.py --sizes 2500,5000 --postgresql   # also on PostgreSQL
    .venv/bin/python bench/import_bench.py --cli                   # also time `scalecost prices import FILE`

For each size N, a fresh database (a temporary SQLite file; with --postgresql, a throwaway schema in --pg-url)
is migrated and seeded, then two files in the project's own CSV format (source `csv`, the columns of
service/store/seed/accelerator_prices.csv) are imported:
- `add`: N offers the catalog does not have (N added prices);
- `change`: the same N offers, each price 10 % higher from a later day (N changed prices: each closes a row,
  opens one, and writes one audit event).
Each file is run as a dry run, then applied (one session, committed at the end), and the seconds printed. The
offers spread over the seeded accelerators and 4 providers, with 50 regions, so that saved-scenario
repricing sees several (accelerator, provider) pairs. `--skip-after S` leaves out the larger sizes once an apply
took longer than S seconds (the quadratic code would run for an hour at 100k rows).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# --code DIR: time another checkout's code (a folder holding `scalecost` -> its service/), e.g. the code before
# a change: `git archive BASE | tar -x -C DIR && ln -s DIR/service DIR/scalecost`.
if "--code" in sys.argv:
    sys.path.insert(0, sys.argv[sys.argv.index("--code") + 1])
else:
    sys.path.insert(0, str(ROOT))

from scalecost.store import migrate  # noqa: E402
from scalecost.store.models import Accelerator, AcceleratorPrice, AuditEvent  # noqa: E402
from scalecost.store.seeding import seed_catalog  # noqa: E402
from scalecost.store.session import Database, normalise_url  # noqa: E402
from scalecost.usecases import price_imports  # noqa: E402
from sqlalchemy import create_engine, func, select, text  # noqa: E402

TODAY = dt.date(2026, 12, 1)
HEADER = "accelerator_id,provider,instance_type,accelerators_per_instance,region,pricing_model,usd_per_accelerator_hour,as_of,source,effective_from\n"
PROVIDERS = ["bench-a", "bench-b", "bench-c", "bench-d"]


def price_file(accelerators: list[str], n: int, *, factor: float, day: dt.date) -> bytes:
    lines = [HEADER]
    for i in range(n):
        usd = (1.0 + (i % 997) / 100.0) * factor
        lines.append(
            f"{accelerators[i % len(accelerators)]},{PROVIDERS[i % len(PROVIDERS)]},bench-{i},8,r{i % 50},"
            f"on-demand,{usd:.4f},{day:%Y-%m},bench,{day.isoformat()}\n"
        )
    return "".join(lines).encode()


def fresh(backend: str, pg_url: str, tmp: Path) -> tuple[str, callable]:
    if backend == "sqlite":
        path = tmp / f"bench-{uuid.uuid4().hex[:8]}.db"
        return f"sqlite:///{path}", lambda: path.unlink(missing_ok=True)
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    admin = create_engine(normalise_url(pg_url), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))

    def drop() -> None:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()

    base = normalise_url(pg_url)
    return f"{base}{'&' if '?' in base else '?'}options=-csearch_path%3D{schema}", drop


CPU: dict[str, float] = {}


def timed(database: Database, data: bytes, *, dry_run: bool) -> tuple[float, dict]:
    """Wall seconds and the answer; this process's CPU seconds go to CPU["last"] (on SQLite all of the work is
    in this process: its CPU time is what a busy machine distorts least)."""
    cpu = time.process_time()
    started = time.perf_counter()
    with database.transaction() as session:
        answer = price_imports.run(
            session,
            "csv",
            [price_imports.PriceFile("bench.csv", data)],
            dry_run=dry_run,
            actor="bench",
            today=TODAY,
        )
    CPU["last"] = time.process_time() - cpu
    return time.perf_counter() - started, answer


def one_size(backend: str, n: int, args, tmp: Path) -> dict[str, float]:
    url, drop = fresh(backend, args.pg_url, tmp)
    try:
        migrate.upgrade(url)
        database = Database(url)
        with database.transaction() as session:
            seed_catalog(session)
            accelerators = sorted(session.scalars(select(Accelerator.id)))
        add = price_file(accelerators, n, factor=1.0, day=dt.date(2026, 1, 1))
        change = price_file(accelerators, n, factor=1.1, day=dt.date(2026, 6, 1))
        out: dict[str, float] = {}
        for name, data, expect in (("add", add, "added"), ("change", change, "changed")):
            out[f"{name} dry"], dry = timed(database, data, dry_run=True)
            assert dry["summary"][expect] == n, dry["summary"]
            out[f"{name} apply"], applied = timed(database, data, dry_run=False)
            out[f"{name} apply cpu"] = CPU["last"]
            assert applied["applied"] and applied["summary"][expect] == n, applied["summary"]
        with database.session() as session:
            events = session.scalar(
                select(func.count()).select_from(AuditEvent).where(AuditEvent.action == "price.import")
            )
            rows = session.scalar(
                select(func.count())
                .select_from(AcceleratorPrice)
                .where(AcceleratorPrice.import_id.is_not(None))
            )
        assert events == 2 * n and rows == 2 * n, (events, rows)
        if args.cli and backend == "sqlite":
            path = tmp / "cli.csv"
            path.write_bytes(price_file(accelerators, n, factor=1.2, day=dt.date(2026, 9, 1)))
            started, children = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run(
                [sys.executable, "-c", "import sys; from scalecost.cli import main; sys.exit(main())",
                 "prices", "import", "--source", "csv", str(path), "--url", url],
                check=True, stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": sys.path[0]},
            )  # fmt: skip
            out["cli change"] = time.perf_counter() - started
            done = resource.getrusage(resource.RUSAGE_CHILDREN)
            out["cli change cpu"] = done.ru_utime + done.ru_stime - children.ru_utime - children.ru_stime
        database.dispose()
        return out
    finally:
        drop()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="2500,5000,10000,20000,100000")
    parser.add_argument("--postgresql", action="store_true", help="also run on PostgreSQL (--pg-url)")
    parser.add_argument(
        "--pg-url",
        default=os.environ.get("BENCH_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"),
    )
    parser.add_argument(
        "--skip-after", type=float, default=120.0, help="seconds of one apply that end the sizes"
    )
    parser.add_argument("--cli", action="store_true", help="also time `scalecost prices import` (SQLite)")
    parser.add_argument("--code", help="time the scalecost code in this folder (see the top of this file)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"# {platform.python_version()} on {platform.machine()}, load average {os.getloadavg()[0]:.2f}")
    columns = ["add dry", "add apply", "add apply cpu", "change dry", "change apply", "change apply cpu"]
    columns += ["cli change", "cli change cpu"] if args.cli else []
    print(f"# code: {Path(price_imports.__file__).resolve().parents[1]}")
    print(f"{'backend':<10} {'rows':>7} " + " ".join(f"{c:>16}" for c in columns) + "   (seconds)")
    with tempfile.TemporaryDirectory() as tmp:
        for backend in ["sqlite", *(["postgresql"] if args.postgresql else [])]:
            for n in sizes:
                figures = one_size(backend, n, args, Path(tmp))
                cells = " ".join(f"{figures.get(c, float('nan')):>16.2f}" for c in columns)
                print(f"{backend:<10} {n:>7} {cells}", flush=True)
                if max(figures["add apply"], figures["change apply"]) > args.skip_after:
                    print(f"# larger sizes skipped: one apply took more than {args.skip_after:.0f} s")
                    break


if __name__ == "__main__":
    main()
