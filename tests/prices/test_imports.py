"""Price imports on SQLite and PostgreSQL: the dry run writes nothing; applying writes one audit event per change
in one transaction; no two periods of one offer overlap; the same file again changes nothing; a price an admin
set by hand after the file's date is kept unless forced; a malformed file writes nothing."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import pytest
from scalecost.store.models import AcceleratorPrice, AuditEvent, PriceImport
from scalecost.usecases import price_imports
from scalecost.usecases.price_formats import PriceFileError
from sqlalchemy import func, select

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "prices"
TODAY = dt.date(2026, 12, 1)
FILES = [
    ("aws-price-list", "aws-ec2-offer-excerpt.json"),
    ("aws-price-list", "aws-ec2-offer-excerpt.csv"),
    ("azure-retail", "azure-retail-page.json"),
    ("gcp-billing", "gcp-billing-skus.json"),
    ("csv", "catalog-prices.csv"),
]


def load(name: str) -> list[price_imports.PriceFile]:
    return [price_imports.PriceFile(name, (FIXTURES / name).read_bytes())]


def counts(session) -> tuple[int, int, int]:
    return (
        session.scalar(select(func.count()).select_from(AcceleratorPrice)),
        session.scalar(select(func.count()).select_from(AuditEvent)),
        session.scalar(select(func.count()).select_from(PriceImport)),
    )


def run(app, source, name, *, dry_run, force=False, actor="test-admin"):
    with app.extensions["scalecost.db"].transaction() as session:
        return price_imports.run(
            session, source, load(name), dry_run=dry_run, force=force, actor=actor, today=TODAY
        )


def assert_no_overlapping_periods(session) -> None:
    history = defaultdict(list)
    for p in session.scalars(select(AcceleratorPrice)):
        history[
            (p.accelerator_id, p.provider, p.instance_type or "", p.region or "", p.pricing_model)
        ].append(p)
    for key, rows in history.items():
        rows.sort(key=lambda p: (p.effective_from, p.id))
        assert sum(1 for p in rows if p.effective_to is None) <= 1, f"two current prices for {key}"
        for p in rows:
            assert p.effective_to is None or p.effective_to >= p.effective_from, key
        for older, newer in zip(rows, rows[1:], strict=False):
            assert older.effective_to is not None and older.effective_to <= newer.effective_from, key


def as_the_2025_seed_had_it(app) -> None:
    """The seed's newest p4d/p4de rows (2026-01-21) carry the fixture's exact instance prices / 8 and are newer
    than the fixture. Put the catalog back as the seed had it before (its 2025-H2 rows, rounded to 4 decimals:
    2.7447 and 3.4309) so that a diff has changed prices to describe."""
    with app.extensions["scalecost.db"].transaction() as session:
        for instance_type, rounded in (("p4d.24xlarge", "2.744700"), ("p4de.24xlarge", "3.430900")):
            rows = sorted(
                session.scalars(
                    select(AcceleratorPrice).where(
                        AcceleratorPrice.instance_type == instance_type,
                        AcceleratorPrice.pricing_model == "on-demand",
                    )
                ),
                key=lambda p: p.effective_from,
            )
            assert str(rows[-2].usd_per_hour) == rounded and rows[-1].effective_from == dt.date(2026, 1, 21)
            session.delete(rows[-1])
            rows[-2].effective_to = None


@pytest.mark.parametrize(("source", "name"), FILES)
def test_dry_run_then_apply_then_again(app, source, name):
    database = app.extensions["scalecost.db"]
    with database.session() as session:
        before = counts(session)
    dry = run(app, source, name, dry_run=True)
    with database.session() as session:
        assert counts(session) == before, "a dry run writes nothing"
    assert dry["import_id"] is None and not dry["applied"] and dry["dry_run"]
    changes = dry["summary"]["added"] + dry["summary"]["changed"]
    assert changes > 0, dry["summary"]

    applied = run(app, source, name, dry_run=False)
    assert applied["applied"] and applied["import_id"]
    for key in ("added", "changed", "unchanged", "kept", "not_in_file", "unmapped", "refused"):
        assert applied[key] == dry[key], f"the dry run announced what applying did ({key})"
    with database.session() as session:
        prices, events, imports = counts(session)
        assert (prices, imports) == (before[0] + changes, before[2] + 1)
        audited = session.scalars(select(AuditEvent).where(AuditEvent.action == "price.import")).all()
        assert len(audited) == events - before[1] == changes, "one audit event per change"
        assert {e.after["import_id"] for e in audited} == {applied["import_id"]}
        opened = session.scalars(
            select(AcceleratorPrice).where(AcceleratorPrice.import_id == applied["import_id"])
        )
        assert len(opened.all()) == changes
        assert_no_overlapping_periods(session)

    again = run(app, source, name, dry_run=False)
    assert not again["applied"] and again["import_id"] is None
    assert again["summary"]["added"] == again["summary"]["changed"] == 0
    assert again["already_imported"]["import_id"] == applied["import_id"]
    with database.session() as session:
        assert counts(session) == (prices, events, imports), "re-importing the same file changes nothing"


def test_per_accelerator_prices_and_what_the_diff_says(app):
    as_the_2025_seed_had_it(app)
    answer = run(app, "aws-price-list", "aws-ec2-offer-excerpt.json", dry_run=True)
    added = {(r["instance_type"], r["region"], r["pricing_model"]): r for r in answer["added"]}
    assert added[("p5.48xlarge", "us-west-2", "on-demand")]["usd_per_hour"] == "6.880000"  # 55.04 / 8
    assert added[("p5.48xlarge", "us-east-1", "reserved-1y")]["usd_per_hour"] == "4.703750"  # 37.63 / 8
    changed = {r["instance_type"]: r for r in answer["changed"]}
    assert changed["p4d.24xlarge"]["old_usd_per_hour"] == "2.744700"  # the rounded stand-in above
    assert changed["p4d.24xlarge"]["usd_per_hour"] == "2.744705"
    assert changed["p4d.24xlarge"]["percent_change"] == pytest.approx(0.000182, abs=1e-6)
    unchanged = {r["instance_type"] for r in answer["unchanged"]}
    assert {"p5.48xlarge", "p5en.48xlarge", "g6e.xlarge"} <= unchanged
    assert [u["instance_type"] for u in answer["unmapped"]] == ["g4ad.xlarge"]  # m5.large has no accelerator
    assert "g5.xlarge" in {r["instance_type"] for r in answer["not_in_file"]}


def test_a_price_set_by_hand_after_the_files_date_is_kept_unless_forced(app, client, admin_headers):
    etag = client.get("/v1/accelerators/nvidia-a100-sxm-40gb").headers["ETag"]
    put = client.put(
        "/v1/accelerators/nvidia-a100-sxm-40gb/prices/aws",
        json={"usd_per_hour": 2.5, "instance_type": "p4d.24xlarge", "region": "us-east-1",
              "effective_from": "2026-02-01", "source": "negotiated"},
        headers={**admin_headers, "If-Match": etag},
    )  # fmt: skip
    assert put.status_code == 200, put.json
    answer = run(app, "aws-price-list", "aws-ec2-offer-excerpt.json", dry_run=False)
    kept = {r["instance_type"]: r for r in answer["kept"]}
    assert "set by hand by 'test-admin'" in kept["p4d.24xlarge"]["reason"]
    assert "p4d.24xlarge" not in {r["instance_type"] for r in answer["changed"]}
    forced = run(app, "aws-price-list", "aws-ec2-offer-excerpt.json", dry_run=False, force=True)
    replaced = {r["instance_type"]: r for r in forced["changed"]}["p4d.24xlarge"]
    assert (replaced["old_usd_per_hour"], replaced["usd_per_hour"]) == ("2.500000", "2.744705")
    # the file's 2025-09-01 is before the row it closes: the replacement starts on the day of the import
    assert replaced["effective_from"] == TODAY.isoformat()
    with app.extensions["scalecost.db"].session() as session:
        assert_no_overlapping_periods(session)


def test_an_older_file_does_not_replace_a_newer_price(app):
    as_the_2025_seed_had_it(app)
    text = (FIXTURES / "aws-ec2-offer-excerpt.json").read_text()
    older = text.replace(
        '"publicationDate" : "2025-09-12T22:53:08Z"', '"publicationDate" : "2025-06-01T00:00:00Z"'
    )
    with app.extensions["scalecost.db"].transaction() as session:
        answer = price_imports.run(
            session, "aws-price-list", [price_imports.PriceFile("old.json", older.encode())], dry_run=False,
            actor="t", today=TODAY,
        )  # fmt: skip
    kept = {r["instance_type"]: r["reason"] for r in answer["kept"]}
    assert set(kept) == {"p4d.24xlarge", "p4de.24xlarge"} and answer["changed"] == []
    assert "an older file does not replace a newer price" in kept["p4d.24xlarge"]


def test_a_listed_price_older_than_the_catalogs_row_takes_over_from_today(app):
    answer = run(app, "azure-retail", "azure-retail-page.json", dry_run=False)
    (changed,) = answer["changed"]  # NC24ads_A100_v4: 3.67 (seeded 2026-04) -> 3.673 (listed since 2022-06)
    assert (changed["old_usd_per_hour"], changed["usd_per_hour"]) == ("3.670000", "3.673000")
    assert changed["effective_from"] == TODAY.isoformat()
    with app.extensions["scalecost.db"].session() as session:
        assert_no_overlapping_periods(session)


def test_a_malformed_file_writes_nothing(app):
    database = app.extensions["scalecost.db"]
    with database.session() as session:
        before = counts(session)
    broken = (
        (FIXTURES / "azure-retail-page.json")
        .read_text()
        .replace('"retailPrice": 3.673', '"retailPrice": "n/a"')
    )
    with pytest.raises(PriceFileError) as raised, database.transaction() as session:
        price_imports.run(
            session,
            "azure-retail",
            [price_imports.PriceFile("p.json", broken.encode())],
            dry_run=False,
            actor="t",
        )
    assert raised.value.where == "$.Items[5].retailPrice"
    with database.session() as session:
        assert counts(session) == before


def test_a_future_price_and_an_unknown_accelerator_are_refused(app):
    data = b"accelerator_id,provider,usd_per_accelerator_hour,effective_from\n" \
           b"nvidia-t4,neo,0.2,2027-01-01\nnvidia-x999,neo,1,2026-01-01\nnvidia-t4,neo,0.25,2026-11-01\n"  # fmt: skip
    with app.extensions["scalecost.db"].transaction() as session:
        answer = price_imports.run(
            session, "csv", [price_imports.PriceFile("n.csv", data)], dry_run=True, actor="t", today=TODAY
        )
    reasons = {r["where"]: r["reason"] for r in answer["refused"]}
    assert "after today" in reasons["line 2"] and "not in the catalog" in reasons["line 3"]
    assert [(r["provider"], r["usd_per_hour"]) for r in answer["added"]] == [
        ("neo", str(Decimal("0.250000")))
    ]
