"""Capacities are what the driver reports (seed/accelerator_memory.csv), not the vendor's decimal GB, and a
database seeded with the old decimal figure is corrected unless an admin set the value."""

from __future__ import annotations

from scalecost.store.models import Accelerator, AuditEvent
from scalecost.store.seeding import _rows, memory_bytes_of, reported_memory, seed_catalog
from sqlalchemy import select, update


def test_h100_capacity_is_the_driver_reported_81559_mib(app):
    with app.extensions["scalecost.db"].transaction() as session:
        h100 = session.get(Accelerator, "nvidia-h100-sxm-80gb")
        assert h100 is not None and h100.memory_bytes == 81559 * 2**20  # 85.5e9 bytes, not 80e9
    assert all(value > 10 * 2**30 for value in reported_memory().values())


def test_reseeding_corrects_the_old_decimal_figure_but_not_an_admin_value(app):
    database = app.extensions["scalecost.db"]
    with database.transaction() as session:  # as an older release seeded them
        session.execute(
            update(Accelerator)
            .where(Accelerator.id == "nvidia-h100-sxm-80gb")
            .values(memory_bytes=80_000_000_000)
        )
        session.execute(
            update(Accelerator)
            .where(Accelerator.id == "nvidia-a100-sxm-80gb")
            .values(memory_bytes=79_000_000_000)
        )
    with database.transaction() as session:
        report = seed_catalog(session)
    assert report.accelerators_corrected == 1
    with database.transaction() as session:
        assert session.get(Accelerator, "nvidia-h100-sxm-80gb").memory_bytes == 81559 * 2**20
        assert session.get(Accelerator, "nvidia-a100-sxm-80gb").memory_bytes == 79_000_000_000  # an admin's
        events = session.scalars(select(AuditEvent).where(AuditEvent.actor == "seed")).all()
        assert [e.target for e in events] == ["accelerator:nvidia-h100-sxm-80gb"]
    with database.transaction() as session:
        assert seed_catalog(session).accelerators_corrected == 0  # idempotent


def test_the_system_a_part_is_built_into_is_seeded_and_shown(app, client):
    with app.extensions["scalecost.db"].transaction() as session:
        gb200 = session.get(Accelerator, "nvidia-gb200")
        rtx = session.get(Accelerator, "nvidia-rtx-6000-ada")
        assert gb200.scale_up_domain == 72 and gb200.scale_out_bandwidth_bytes_per_s == 400e9 / 8
        assert rtx.scale_up_domain is None and rtx.scale_out_bandwidth_bytes_per_s is None
    body = client.get("/v1/accelerators/nvidia-gb200").json
    assert body["scale_up_domain"] == 72 and body["scale_out_bandwidth_bytes_per_s"] == 5e10


def test_reseeding_fills_an_empty_system_but_not_an_admin_value(app):
    database = app.extensions["scalecost.db"]
    with database.transaction() as session:  # as the catalog was before it knew systems
        session.execute(
            update(Accelerator).values(scale_up_domain=None, scale_out_bandwidth_bytes_per_s=None)
        )
        session.execute(update(Accelerator).where(Accelerator.id == "nvidia-b200").values(scale_up_domain=16))
    with database.transaction() as session:
        seed_catalog(session)
    with database.transaction() as session:
        assert session.get(Accelerator, "nvidia-gb200").scale_up_domain == 72
        assert session.get(Accelerator, "nvidia-b200").scale_up_domain == 16  # an admin's


def test_every_reported_capacity_names_a_catalog_row_and_a_source():
    rows = _rows("accelerator_memory.csv")
    catalog_ids = {r["id"] for r in _rows("accelerators.csv")}
    assert len({r["id"] for r in rows}) == len(rows)  # one reading per accelerator
    for row in rows:
        assert row["id"] in catalog_ids, row["id"]
        assert row["source"].strip(), row["id"]  # each reading says where it was read
        assert reported_memory()[row["id"]] == int(row["reported_mib"]) * 2**20


def test_the_reported_capacity_replaces_the_decimal_datasheet_figure():
    catalog = {r["id"]: r for r in _rows("accelerators.csv")}
    reported = reported_memory()
    assert reported["nvidia-b200"] == 183359 * 2**20  # nvidia-smi, not 180e9
    assert reported["amd-mi300x"] == 206_141_652_992  # rocm-smi bytes, not 192e9
    for acc_id, value in reported.items():
        assert memory_bytes_of(catalog[acc_id], reported) == value
        # a driver figure is within a few percent of the marketed capacity (a typo in MiB would not be)
        assert 0.9 < value / (float(catalog[acc_id]["memory_gb"]) * 1e9) < 1.15, acc_id


def test_capacity_in_gib_where_the_vendor_quotes_gib():
    catalog = {r["id"]: r for r in _rows("accelerators.csv")}
    assert memory_bytes_of(catalog["google-tpu-v5p"]) == 95 * 2**30
    assert memory_bytes_of(catalog["aws-trainium2"]) == 96 * 2**30
    assert memory_bytes_of(catalog["google-tpu-v5e"]) == 16 * 10**9  # Google quotes "16 GB" there
