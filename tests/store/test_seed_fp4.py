"""FP4 peaks (issue 11): the dense FP4 tensor rate of the Blackwell and CDNA 4 rows comes from
seed/accelerator_fp4.csv (each with its source), every other row has none, and a database seeded before the
column existed gets the seed's figure unless an admin set one."""

from __future__ import annotations

import csv
from importlib import resources

from scalecost.store.models import Accelerator, AuditEvent
from scalecost.store.seeding import fp4_peaks, seed_catalog
from sqlalchemy import select, update

FP4_DENSE_TFLOPS = {
    "nvidia-b200": 9000.0,
    "nvidia-gb200": 10000.0,
    "nvidia-gb300": 15000.0,
    "nvidia-rtx-pro-6000-blackwell": 2000.0,
    "nvidia-rtx-5090": 1676.0,
    "amd-mi355x": 10066.4,
}


def test_every_fp4_row_names_a_catalog_part_and_its_source():
    seed = resources.files("scalecost.store").joinpath("seed")
    ids = {r["id"] for r in csv.DictReader(seed.joinpath("accelerators.csv").read_text().splitlines())}
    rows = list(csv.DictReader(seed.joinpath("accelerator_fp4.csv").read_text().splitlines()))
    assert {r["id"] for r in rows} <= ids
    assert all(len(r["source"]) > 40 for r in rows)
    assert {k: v / 1e12 for k, v in fp4_peaks().items()} == FP4_DENSE_TFLOPS


def test_fp4_is_seeded_for_the_blackwell_rows_and_absent_elsewhere(app, client):
    with app.extensions["scalecost.db"].transaction() as session:
        peaks = {a.id: a.peak_fp4_flops_per_s for a in session.scalars(select(Accelerator))}
    assert {k: v / 1e12 for k, v in peaks.items() if v is not None} == FP4_DENSE_TFLOPS
    assert peaks["nvidia-h100-sxm-80gb"] is None and peaks["amd-mi300x"] is None
    body = client.get("/v1/accelerators/nvidia-b200").json
    assert body["peak_flops_per_s"]["fp4"] == 9e15  # dense, not the 18 PFLOPS sparse figure
    assert client.get("/v1/accelerators/nvidia-a100-sxm-80gb").json["peak_flops_per_s"]["fp4"] is None


def test_reseeding_fills_an_empty_fp4_peak_but_not_an_admin_value(app):
    database = app.extensions["scalecost.db"]
    with database.transaction() as session:  # as the catalog was before migration 0008
        session.execute(update(Accelerator).values(peak_fp4_flops_per_s=None))
        session.execute(
            update(Accelerator).where(Accelerator.id == "nvidia-gb300").values(peak_fp4_flops_per_s=1.4e16)
        )
    with database.transaction() as session:
        report = seed_catalog(session)
    assert report.accelerators_corrected == len(FP4_DENSE_TFLOPS) - 1
    with database.transaction() as session:
        assert session.get(Accelerator, "nvidia-b200").peak_fp4_flops_per_s == 9e15
        assert session.get(Accelerator, "nvidia-gb300").peak_fp4_flops_per_s == 1.4e16  # an admin's
        events = session.scalars(select(AuditEvent).where(AuditEvent.actor == "seed")).all()
        assert {e.target for e in events} == {
            f"accelerator:{i}" for i in FP4_DENSE_TFLOPS if i != "nvidia-gb300"
        }
    with database.transaction() as session:
        assert seed_catalog(session).accelerators_corrected == 0  # idempotent
