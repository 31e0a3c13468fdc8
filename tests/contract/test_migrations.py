"""Migrations: empty → head, head → base → head, and the models match the migrations (no pending diff)."""

from __future__ import annotations

import json

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from scalecost.store import migrate
from scalecost.store.models import Base
from scalecost.store.session import make_engine
from sqlalchemy import inspect, text


def _tables(url: str) -> set[str]:
    engine = make_engine(url, single_use=True)
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_upgrade_from_empty_to_head_creates_every_model_table(empty_db_url):
    migrate.upgrade(empty_db_url)
    assert set(Base.metadata.tables) | {"alembic_version"} <= _tables(empty_db_url)


def test_downgrade_to_base_and_back_to_head(empty_db_url):
    migrate.upgrade(empty_db_url)
    migrate.downgrade(empty_db_url, "base")
    assert _tables(empty_db_url) <= {"alembic_version"}
    migrate.upgrade(empty_db_url)
    assert set(Base.metadata.tables) <= _tables(empty_db_url)


def test_upgrade_is_idempotent(empty_db_url):
    migrate.upgrade(empty_db_url)
    migrate.upgrade(empty_db_url)
    engine = make_engine(empty_db_url, single_use=True)
    with engine.connect() as conn:
        assert migrate.current_revision(conn) == migrate.head_revision()
    engine.dispose()


def test_models_match_migrations_no_pending_autogenerate_diff(empty_db_url):
    migrate.upgrade(empty_db_url)
    engine = make_engine(empty_db_url, single_use=True)
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        diff = compare_metadata(context, Base.metadata)
    engine.dispose()
    assert diff == [], f"models and migrations differ: {diff}"


def _columns(url: str, table: str) -> set[str]:
    engine = make_engine(url, single_use=True)
    try:
        return {c["name"] for c in inspect(engine).get_columns(table)}
    finally:
        engine.dispose()


def test_0008_adds_the_fp4_peak_and_downgrade_removes_it_keeping_the_rows(empty_db_url):
    migrate.upgrade(empty_db_url, "0007")
    assert "peak_fp4_flops_per_s" not in _columns(empty_db_url, "accelerators")
    engine = make_engine(empty_db_url, single_use=True)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO accelerators (id, name, vendor, kind, memory_bytes, memory_bandwidth_bytes_per_s,"
                " version, created_at, updated_at) VALUES ('x', 'X', 'V', 'gpu', 1000000000, 1e12, 1,"
                " '2026-12-01 00:00:00', '2026-12-01 00:00:00')"
            )
        )
    migrate.upgrade(empty_db_url, "0008")
    assert "peak_fp4_flops_per_s" in _columns(empty_db_url, "accelerators")
    with engine.connect() as conn:  # nullable: the existing row reads null until the seed fills it
        assert conn.execute(text("SELECT peak_fp4_flops_per_s FROM accelerators")).all() == [(None,)]
    migrate.downgrade(empty_db_url, "0007")
    assert "peak_fp4_flops_per_s" not in _columns(empty_db_url, "accelerators")
    with engine.connect() as conn:
        assert conn.execute(text("SELECT id FROM accelerators")).all() == [("x",)]
    engine.dispose()


def test_0009_backfills_what_each_price_row_sells_and_downgrade_keeps_the_rows(empty_db_url):
    migrate.upgrade(empty_db_url, "0008")
    engine = make_engine(empty_db_url, single_use=True)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO accelerators (id, name, vendor, kind, memory_bytes, memory_bandwidth_bytes_per_s,"
                " version, created_at, updated_at) VALUES ('google-tpu-v6e', 'v6e', 'Google', 'tpu', 32000000000,"
                " 1.6e12, 1, '2026-12-01 00:00:00', '2026-12-01 00:00:00')"
            )
        )
        for provider, source in (
            ("aws", "seed"),
            ("lambda", "seed"),
            ("gcp", "Cloud Billing Catalog SKU 1 (Nvidia H100), us-east4; device only, VM billed apart"),
            ("somecloud", "seed"),
        ):
            conn.execute(
                text(
                    "INSERT INTO accelerator_prices (accelerator_id, provider, pricing_model, usd_per_hour,"
                    " effective_from, source, accelerators_per_instance, created_by, created_at) VALUES"
                    " ('google-tpu-v6e', :provider, 'on-demand', 2.7, '2025-01-01', :source, 1, 'seed',"
                    " '2026-12-01 00:00:00')"
                ),
                {"provider": provider, "source": source},
            )
    migrate.upgrade(empty_db_url, "0009")
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT provider, billing_increment_seconds, minimum_billed_seconds, startup_seconds, covers,"
                " max_accelerators, slice_sizes FROM accelerator_prices ORDER BY id"
            )
        ).all()
    by_provider = {r[0]: r[1:] for r in rows}
    # published terms (engine/offers.py PROVIDER_TERMS), a neocloud's default for an unknown provider
    assert by_provider["aws"][:3] == (1, 60, 600)
    assert by_provider["lambda"][:3] == (60, 60, 300)
    assert by_provider["somecloud"][:3] == (60, 60, 300)
    assert by_provider["gcp"][3] == "accelerator" and by_provider["aws"][3] == "instance"
    assert all(r[4] is None for r in by_provider.values())  # capacity: not stated
    slices = by_provider["aws"][5]
    slices = json.loads(slices) if isinstance(slices, str) else slices
    assert slices == [1, 4, 8, 16, 32, 64, 128, 256]
    migrate.downgrade(empty_db_url, "0008")
    assert "covers" not in _columns(empty_db_url, "accelerator_prices")
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM accelerator_prices")).scalar() == 4
    engine.dispose()


def test_0011_backfills_spot_evictions_per_instance_hour_and_downgrade_keeps_the_rows(empty_db_url):
    migrate.upgrade(empty_db_url, "0009")
    engine = make_engine(empty_db_url, single_use=True)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO accelerators (id, name, vendor, kind, memory_bytes, memory_bandwidth_bytes_per_s,"
                " version, created_at, updated_at) VALUES ('h', 'H', 'NVIDIA', 'gpu', 80000000000,"
                " 3.35e12, 1, '2026-12-01 00:00:00', '2026-12-01 00:00:00')"
            )
        )
        for provider, model in (
            ("aws", "spot"),
            ("gcp", "spot"),
            ("somecloud", "spot"),
            ("aws", "on-demand"),
        ):
            conn.execute(
                text(
                    "INSERT INTO accelerator_prices (accelerator_id, provider, pricing_model, usd_per_hour,"
                    " effective_from, source, accelerators_per_instance, created_by, created_at, covers) VALUES"
                    " ('h', :provider, :model, 2.0, '2025-01-01', 'seed', 8, 'seed', '2026-12-01 00:00:00',"
                    " 'instance')"
                ),
                {"provider": provider, "model": model},
            )
    migrate.upgrade(empty_db_url, "0011")
    with engine.connect() as conn:
        rows = conn.execute(
            text("SELECT provider, pricing_model, interruptions_per_hour FROM accelerator_prices ORDER BY id")
        ).all()
    rates = {(r[0], r[1]): r[2] for r in rows}
    # the published rates (engine/offers.py SPOT_INTERRUPTIONS_PER_HOUR), the default for an unknown provider
    assert rates[("aws", "spot")] == pytest.approx(0.20 / 730.0)
    assert rates[("gcp", "spot")] == pytest.approx(0.15 / 24.0)
    assert rates[("somecloud", "spot")] == pytest.approx(0.15 / 24.0)
    assert rates[("aws", "on-demand")] is None  # not reclaimed
    migrate.downgrade(empty_db_url, "0009")
    assert "interruptions_per_hour" not in _columns(empty_db_url, "accelerator_prices")
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM accelerator_prices")).scalar() == 4
    engine.dispose()
