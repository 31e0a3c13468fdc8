"""Refresh the seeded prices from SkyPilot catalog files (a maintainer's tool, like tests/golden/record.py):

    PYTHONPATH=. .venv/bin/python -m tests.prices.refresh_seed \\
        --catalog v8 --commit e385a0d3 --date 2026-11-30 aws/vms.csv [gcp/vms.csv …]

Each FILE is one cloud's `catalogs/<catalog>/<cloud>/vms.csv` at `--commit`, whose commit date is `--date`
(`git log -1 --format=%cs <commit>`): the folder names the cloud. Every current seeded row of that cloud
(service/store/seed/accelerator_prices.csv) whose instance type (and region, when the row has one) the file prices
for the same accelerator and pricing model gets a new row after it: the file's price per accelerator-hour, `as_of`
the commit's day (the row's first day: seeding.effective_from_of), the source naming the file, the commit and the
instance price. Rows the file lacks are left as they are and listed. The seed keeps its history (the older row
closes when the newer opens: service/store/seeding.py). Prints how many current seeded prices were stale on
--today (default: --date) before and after.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import io
from decimal import Decimal
from pathlib import Path

from scalecost.store.seeding import effective_from_of
from scalecost.usecases import price_formats

SEED = Path(__file__).resolve().parents[2] / "service" / "store" / "seed" / "accelerator_prices.csv"
STALE_AFTER_DAYS = 90  # PRICE_STALE_AFTER_DAYS' default


def current_rows(rows: list[dict[str, str]]) -> dict[tuple, dict[str, str]]:
    """The newest row of each offer (accelerator, provider, instance type, region, pricing model)."""
    out: dict[tuple, dict[str, str]] = {}
    for r in rows:
        key = (r["accelerator_id"], r["provider"], r["instance_type"], r["region"], r["pricing_model"])
        if key not in out or effective_from_of(r["as_of"]) > effective_from_of(out[key]["as_of"]):
            out[key] = r
    return out


def stale_count(rows: list[dict[str, str]], today: dt.date) -> tuple[int, int]:
    current = current_rows(rows).values()
    return sum((today - effective_from_of(r["as_of"])).days > STALE_AFTER_DAYS for r in current), len(current)


def refreshed(rows: list[dict[str, str]], files: list[tuple[str, bytes]], catalog: str, commit: str,
              day: dt.date) -> tuple[list[dict[str, str]], list[tuple]]:  # fmt: skip
    """The seed rows with a new row after each current row a file prices; and the current rows no file prices."""
    offers: dict[tuple, Decimal] = {}
    for path, data in files:
        cloud = Path(path).parent.name
        parsed = price_formats.parse("skypilot", data, f"{cloud}/vms-{day.isoformat()}.csv")
        for o in parsed.offers:
            if o.accelerator_id is None or o.covers != "instance":
                continue
            for region in (
                o.region or "",
                "",
            ):  # a seeded row without a region takes the lowest of any region
                key = (o.accelerator_id, o.provider, o.instance_type, region, o.pricing_model)
                offers[key] = min(offers.get(key, o.usd_per_hour), o.usd_per_hour)
    clouds = {Path(p).parent.name for p, _ in files}
    added, missing = [], []
    for key, row in current_rows(rows).items():
        if row["provider"] not in clouds:
            continue
        usd = offers.get(key)
        if usd is None or effective_from_of(row["as_of"]) >= day:
            missing.append(key)
            continue
        count = int(row["accelerators_per_instance"] or 1)
        path = f"catalogs/{catalog}/{row['provider']}/vms.csv"
        source = f"skypilot-org/skypilot-catalog {path} @{commit[:8]} (${usd * count:.2f}/h)"
        added.append({**row, "usd_per_accelerator_hour": f"{usd.normalize():f}", "as_of": day.isoformat(),
                      "source": source})  # fmt: skip
    return rows + added, missing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", help="<cloud>/vms.csv files of one catalog commit")
    parser.add_argument("--catalog", required=True, help="the catalog schema folder, e.g. v8")
    parser.add_argument("--commit", required=True, help="the skypilot-catalog commit the files are from")
    parser.add_argument("--date", required=True, type=dt.date.fromisoformat, help="that commit's date")
    parser.add_argument("--today", type=dt.date.fromisoformat, help="day to count stale prices on")
    args = parser.parse_args()
    text = SEED.read_text(encoding="utf-8")
    reader = csv.DictReader(io.StringIO(text))
    rows = list(reader)
    today = args.today or args.date
    files = [(f, Path(f).read_bytes()) for f in args.files]
    new_rows, missing = refreshed(rows, files, args.catalog, args.commit, args.date)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=reader.fieldnames or [], lineterminator="\n")
    writer.writeheader()
    writer.writerows(new_rows)
    SEED.write_text(out.getvalue(), encoding="utf-8")
    before, after = stale_count(rows, today), stale_count(new_rows, today)
    print(f"{len(new_rows) - len(rows)} rows added; stale on {today}: {before[0]} of {before[1]} before, "
          f"{after[0]} of {after[1]} after")  # fmt: skip
    for key in missing:
        print("not in the files:", *key)


if __name__ == "__main__":
    main()
