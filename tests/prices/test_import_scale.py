"""Applying a price import in linear time (issue: 20k rows took 127 s, flushing once per changed row): the
statements an apply sends do not grow with its rows (bulk statements, one audit event per change still), and
the CLI's batched apply commits a bounded number of changes per transaction, stops with what it applied, and
a second run applies the rest. bench/import_bench.py has the timings."""

from __future__ import annotations

import datetime as dt
import math

import pytest
from scalecost.store import price_imports as store
from scalecost.store.models import Accelerator, AcceleratorPrice, AuditEvent, PriceImport
from scalecost.usecases import price_imports
from sqlalchemy import event, func, select

TODAY = dt.date(2026, 12, 1)
HEADER = (
    "accelerator_id,provider,instance_type,accelerators_per_instance,region,pricing_model,"
    "usd_per_accelerator_hour,as_of,source,effective_from\n"
)
ACCELERATORS = ["nvidia-h100-sxm-80gb", "nvidia-a100-sxm-40gb", "nvidia-l4"]


def price_file(n: int, factor: float, day: dt.date) -> list[price_imports.PriceFile]:
    lines = [HEADER] + [
        f"{ACCELERATORS[i % 3]},scale-{i % 2},inst-{i},8,r{i % 7},on-demand,{(1 + i / 1000) * factor:.4f},"
        f"{day:%Y-%m},scale test,{day.isoformat()}\n"
        for i in range(n)
    ]
    return [price_imports.PriceFile("scale.csv", "".join(lines).encode())]


def statements_of_apply(app, files) -> tuple[int, dict]:
    """The SQL statements (an executemany counts once) of applying `files`, and the answer."""
    database = app.extensions["scalecost.db"]
    seen: list[str] = []

    def count(conn, cursor, statement, parameters, context, executemany):
        seen.append(statement)

    event.listen(database.engine, "before_cursor_execute", count)
    try:
        with database.transaction() as session:
            answer = price_imports.run(session, "csv", files, dry_run=False, actor="t", today=TODAY)
    finally:
        event.remove(database.engine, "before_cursor_execute", count)
    return len(seen), answer


def test_apply_sends_the_same_statements_for_30_and_300_changes(app):
    small, answer = statements_of_apply(app, price_file(30, 1.0, dt.date(2026, 1, 1)))
    assert answer["summary"]["added"] == 30
    large, answer = statements_of_apply(app, price_file(300, 1.05, dt.date(2026, 2, 1)))
    assert answer["summary"]["added"] == 270 and answer["summary"]["changed"] == 30
    changed, answer = statements_of_apply(app, price_file(300, 1.1, dt.date(2026, 3, 1)))
    assert answer["summary"]["changed"] == 300
    # Before: a flush per change (an UPDATE of the old row, an INSERT, the accelerator's version, the audit
    # event): 300 changes were > 1,200 statements. Now a constant number of bulk statements.
    assert large <= small + 5 and changed <= small + 5, (small, large, changed)
    assert changed < 60, changed


def test_bulk_apply_writes_one_audit_event_per_change_with_both_snapshots(app):
    database = app.extensions["scalecost.db"]
    statements_of_apply(app, price_file(40, 1.0, dt.date(2026, 1, 1)))
    _, answer = statements_of_apply(app, price_file(40, 1.25, dt.date(2026, 6, 1)))
    with database.session() as session:
        events = session.scalars(
            select(AuditEvent).where(AuditEvent.action == "price.import").order_by(AuditEvent.id)
        ).all()
        assert len(events) == 80
        for e in events[40:]:
            assert e.before["import_id"] == e.after["import_id"] == answer["import_id"]
            (old,) = e.before["prices"]
            closed, opened = e.after["prices"]
            assert old["effective_to"] is None and closed["id"] == old["id"]
            assert closed["effective_to"] == opened["effective_from"] == "2026-06-01"
            row = session.get(AcceleratorPrice, opened["id"])
            assert row.import_id == answer["import_id"] and str(row.usd_per_hour) == opened["usd_per_hour"]
            assert e.target == f"accelerator:{row.accelerator_id}"
            assert session.get(AcceleratorPrice, old["id"]).effective_to == dt.date(2026, 6, 1)
        versions = {a: session.get(Accelerator, a).version for a in ACCELERATORS}
    assert all(v >= 2 for v in versions.values()), "each changed accelerator's version (ETag) moved"


def test_batched_apply_commits_per_batch_and_a_second_run_applies_the_rest(app, monkeypatch):
    database = app.extensions["scalecost.db"]
    files = price_file(250, 1.0, dt.date(2026, 1, 1))
    real = store.change_prices
    calls = {"n": 0}

    def fail_on_third(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr(store, "change_prices", fail_on_third)
    with database.session() as session, pytest.raises(price_imports.PartialImport) as stopped:
        price_imports.run(
            session, "csv", files, dry_run=False, actor="cli", today=TODAY, batch=100, commit=session.commit
        )
    assert (stopped.value.applied, stopped.value.total) == (200, 250)
    with database.session() as session:
        assert session.scalar(select(func.count()).where(AcceleratorPrice.import_id.is_not(None))) == 200
        assert session.scalar(select(func.count()).where(AuditEvent.action == "price.import")) == 200
        partial = session.get(PriceImport, stopped.value.import_id)
        assert partial.changes == 200
        assert partial.result["import_id"] == partial.id and partial.result["applied"] is False
        assert partial.result["summary"]["added"] == 250, "the record shows the diff it was applying"

    monkeypatch.setattr(store, "change_prices", real)
    commits = {"n": 0}
    with database.session() as session:

        def commit():
            commits["n"] += 1
            session.commit()

        answer = price_imports.run(
            session, "csv", files, dry_run=False, actor="cli", today=TODAY, batch=20, commit=commit
        )
        session.commit()
    assert answer["summary"]["added"] == 50 and answer["summary"]["unchanged"] == 200
    assert commits["n"] == math.ceil(50 / 20)
    with database.session() as session:
        assert session.scalar(select(func.count()).where(AcceleratorPrice.import_id.is_not(None))) == 250
        assert session.scalar(select(func.count()).where(AuditEvent.action == "price.import")) == 250


def test_the_api_applies_at_most_its_limit_and_says_to_use_the_cli(app, client, admin_headers):
    app.config["PRICE_IMPORT_API_MAX_CHANGES"] = 20
    (file,) = price_file(30, 1.0, dt.date(2026, 1, 1))

    def post(dry_run: bool):
        return client.post(
            "/v1/price-imports",
            query_string={"source": "csv", "dry_run": str(dry_run).lower(), "name": "scale.csv"},
            data=file.data,
            headers={**admin_headers, "Content-Type": "text/csv"},
        )

    assert post(True).status_code == 200, "a dry run of any size is answered"
    refused = post(False)
    assert refused.status_code == 413 and refused.mimetype == "application/problem+json", refused.json
    assert "30" in refused.json["detail"] and "scalecost prices import" in refused.json["detail"]
    with app.extensions["scalecost.db"].session() as session:
        assert session.scalar(select(func.count()).where(AcceleratorPrice.import_id.is_not(None))) == 0
        assert session.scalar(select(func.count()).select_from(PriceImport)) == 0
    app.config["PRICE_IMPORT_API_MAX_CHANGES"] = 30
    applied = post(False)
    assert applied.status_code == 201 and applied.json["summary"]["added"] == 30, applied.json


def test_one_transaction_apply_pauses_between_batches(app):
    """The API's apply is one transaction, written in batches with the event loop yielded between them."""
    pauses = []
    with app.extensions["scalecost.db"].transaction() as session:
        answer = price_imports.run(
            session, "csv", price_file(30, 1.0, dt.date(2026, 1, 1)), dry_run=False, actor="t", today=TODAY,
            batch=10, pause=lambda: pauses.append(1),
        )  # fmt: skip
    assert answer["summary"]["added"] == 30 and len(pauses) == 2
    with app.extensions["scalecost.db"].session() as session:
        assert session.get(PriceImport, answer["import_id"]).changes == 30
        assert session.scalar(select(func.count()).where(AuditEvent.action == "price.import")) == 30


def test_the_api_stays_writable_while_the_cli_imports(app, admin_headers, migrated_url, db_backend, tmp_path):
    """`scalecost prices import` holds SQLite's write lock one batch at a time: API writes during a long import
    go through (before: the whole import was one transaction, and every API write waited for it, then 503)."""
    if db_backend != "sqlite":
        pytest.skip("SQLite: one writer for the whole database")
    import subprocess
    import sys
    import time
    from pathlib import Path

    from scalecost import create_app

    path = tmp_path / "big.csv"
    path.write_bytes(price_file(20_000, 1.0, dt.date(2026, 1, 1))[0].data)
    api = create_app(
        {
            "DATABASE_URL": migrated_url,
            "TESTING": True,
            "RATELIMIT_ENABLED": False,
            "SQLITE_BUSY_TIMEOUT_MS": 2000,
        }
    )
    client = api.test_client()
    cli = subprocess.Popen(
        [str(Path(sys.executable).parent / "scalecost"), "prices", "import", "--source", "csv", str(path),
         "--url", migrated_url, "--batch", "100"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    statuses = []
    try:
        deadline = time.monotonic() + 120
        with app.extensions["scalecost.db"].session() as session:
            while session.scalar(select(func.count()).select_from(PriceImport)) == 0:
                assert cli.poll() is None and time.monotonic() < deadline, cli.communicate()
                time.sleep(0.05)
                session.rollback()
        for i in range(6):
            if cli.poll() is not None:
                break
            etag = client.get("/v1/accelerators/nvidia-t4").headers["ETag"]
            response = client.put(
                "/v1/accelerators/nvidia-t4/prices/aws",
                json={"usd_per_hour": 0.3 + i / 100},
                headers={**admin_headers, "If-Match": etag},
            )
            statuses.append(response.status_code)
        out, err = cli.communicate(timeout=120)
    finally:
        if cli.poll() is None:
            cli.kill()
        api.extensions["scalecost.db"].dispose()
    assert cli.returncode == 0, err
    assert len(statuses) >= 3, f"the import ended before the API wrote: {statuses}"
    assert set(statuses) == {200}, statuses


def test_the_api_reads_at_most_its_offer_limit_and_lists_at_most_its_rows(app, client, admin_headers):
    """Issue 28: a dry run of a 24 MiB file (300,000 offers) parsed and diffed for 12 s on the worker's loop and
    answered every row. The API reads at most PRICE_IMPORT_API_MAX_OFFERS offers (else a 413 naming the CLI,
    dry run or not) and lists at most PRICE_IMPORT_API_LISTED_MAX rows per list (the summary counts all)."""
    app.config["PRICE_IMPORT_API_MAX_OFFERS"] = 40
    app.config["PRICE_IMPORT_API_LISTED_MAX"] = 10

    def post(n: int, dry_run: bool):
        (file,) = price_file(n, 1.0, dt.date(2026, 1, 1))
        return client.post(
            "/v1/price-imports",
            query_string={"source": "csv", "dry_run": str(dry_run).lower(), "name": "scale.csv"},
            data=file.data,
            headers={**admin_headers, "Content-Type": "text/csv"},
        )

    for dry_run in (True, False):
        refused = post(41, dry_run)
        assert refused.status_code == 413 and refused.mimetype == "application/problem+json", refused.json
        assert "41" in refused.json["detail"] and "scalecost prices import" in refused.json["detail"]
    dry = post(40, True)
    assert dry.status_code == 200 and dry.json["summary"]["added"] == 40, dry.json
    assert (
        len(dry.json["added"]) == 10 and dry.json["listed_max"] == 10 and dry.json["truncated"] == ["added"]
    )
    applied = post(40, False)
    assert applied.status_code == 201 and applied.json["summary"]["added"] == 40
    again = post(40, True)
    assert again.json["summary"]["unchanged"] == 40 and again.json["truncated"] == ["unchanged"]
    with app.extensions["scalecost.db"].session() as session:
        assert session.scalar(select(func.count()).where(AcceleratorPrice.import_id.is_not(None))) == 40


def test_the_use_case_parses_through_the_callers_offload(app):
    """The API passes greenlets.off_the_loop: every step that touches no database (parse, mapping, diff, the
    answer) runs in gevent's thread pool, where the loop keeps answering other requests."""
    calls = []

    def offload(call, *args):
        calls.append(getattr(call, "func", call).__name__)
        return call(*args)

    with app.extensions["scalecost.db"].transaction() as session:
        answer = price_imports.run(
            session, "csv", price_file(5, 1.0, dt.date(2026, 1, 1)), dry_run=True, actor="t", today=TODAY,
            offload=offload,
        )  # fmt: skip
    assert calls == ["read_files", "map_offers", "dedupe", "diff", "_before_after", "_answer"]
    assert answer["summary"]["added"] == 5
    assert answer["listed_max"] is None and answer["truncated"] == []
