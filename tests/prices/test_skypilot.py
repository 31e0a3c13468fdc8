"""The `skypilot` reader: one cloud's vms.csv of SkyPilot's public catalog (tests/fixtures/prices/README.md cites
the commits the sample rows come from), on-demand and spot, accelerator names mapped to catalog ids, whole-instance
prices per accelerator-hour, unknown accelerators skipped and counted; and its import on both databases."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest
from scalecost.usecases import price_formats, price_imports
from scalecost.usecases.price_formats import PriceFileError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "prices"
LAMBDA = "lambda/vms-2025-12-01.csv"  # the folder names the cloud, the name the catalog commit's day
RUNPOD = "catalogs/v8/runpod/vms.csv@2025-12-01"


def _parse(fixture: str, name: str):
    return price_formats.parse("skypilot", (FIXTURES / fixture).read_bytes(), name)


def test_lambda_rows_become_per_accelerator_instance_prices():
    parsed = _parse("skypilot-lambda-vms.csv", LAMBDA)
    got = {(o.instance_type, o.region, o.pricing_model): o for o in parsed.offers}
    h100 = got[("gpu_8x_h100_sxm5", "us-east-1", "on-demand")]
    assert h100.provider == "lambda" and h100.accelerator_id == "nvidia-h100-sxm-80gb"
    assert h100.usd_per_hour == Decimal("31.92") / 8 and h100.accelerators_per_instance == 8
    assert h100.covers == "instance" and h100.effective_from == dt.date(2025, 12, 1)
    assert "$31.92/h for 8 × H100" in h100.source
    assert got[("gpu_8x_b200_sxm6", "us-east-1", "on-demand")].usd_per_hour == Decimal("53.52") / 8
    assert got[("gpu_8x_v100", "us-east-1", "on-demand")].accelerator_id == "nvidia-v100-sxm-16gb"
    # GH200 has no catalog id: its instance price stays per instance, for the instance map (or `unmapped`)
    gh200 = got[("gpu_1x_gh200", "us-east-1", "on-demand")]
    assert gh200.accelerator_id is None and gh200.usd_per_hour == Decimal("2.29")
    assert parsed.ignored == 1  # the CPU instance
    assert not any(o.pricing_model == "spot" for o in parsed.offers)  # Lambda lists no spot price


def test_runpod_columns_in_another_order_pcie_parts_spot_prices_and_zones():
    parsed = _parse("skypilot-runpod-vms.csv", RUNPOD)
    got = {(o.instance_type, o.region, o.pricing_model): o for o in parsed.offers}
    one = got[("1x_A100-80GB_SECURE", "CA", "spot")]
    assert one.accelerator_id == "nvidia-a100-pcie-80gb"  # GpuInfo says "A100 PCIe"
    assert one.provider == "runpod" and one.usd_per_hour == Decimal("1.39")
    assert got[("2x_A100-80GB_SECURE", "CA", "on-demand")].usd_per_hour == Decimal("2.78") / 2
    assert len(parsed.offers) == 6  # two zones of CA priced once per pricing model
    assert parsed.ignored == 2


def test_the_name_must_state_the_cloud_and_the_day():
    data = (FIXTURES / "skypilot-lambda-vms.csv").read_bytes()
    for name in ("vms.csv", "lambda/vms.csv", "vms-2025-12-01.csv"):
        with pytest.raises(PriceFileError) as raised:
            price_formats.parse("skypilot", data, name)
        assert raised.value.where == "name"
    assert price_formats.parse("skypilot", data, "lambda-vms-2025-12-01.csv").offers[0].provider == "lambda"


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (b"InstanceType,AcceleratorName,Price,Region\n", "line 1"),
        (
            b"InstanceType,AcceleratorName,AcceleratorCount,Price,Region\np5,H100,8.0,cheap,us-east-1\n",
            "line 2",
        ),
        (b"\xff\xfe", "byte 0"),
    ],
)
def test_a_malformed_vms_csv_is_refused_naming_where(data, where):
    with pytest.raises(PriceFileError) as raised:
        price_formats.parse("skypilot", data, "aws-vms-2025-12-01.csv")
    assert raised.value.where.startswith(where), str(raised.value)


def test_a_fractional_accelerator_count_is_refused_not_guessed():
    data = b"InstanceType,AcceleratorName,AcceleratorCount,Price,Region\ng4ad,V520,0.5,0.4,us-east-1\n"
    parsed = price_formats.parse("skypilot", data, "aws-vms-2025-12-01.csv")
    assert not parsed.offers and [r.where for r in parsed.refused] == ["line 2"]


def test_importing_a_vms_csv_adds_on_demand_and_spot_rows_and_counts_unknown_accelerators(app):
    files = [price_imports.PriceFile(RUNPOD, (FIXTURES / "skypilot-runpod-vms.csv").read_bytes())]
    with app.extensions["scalecost.db"].transaction() as session:
        answer = price_imports.run(
            session, "skypilot", files, dry_run=False, actor="t", today=dt.date(2026, 12, 1)
        )
    added = {(r["instance_type"], r["region"], r["pricing_model"]) for r in answer["added"]}
    assert ("1x_A100-80GB_SECURE", "US", "spot") in added and len(added) == 6
    files = [price_imports.PriceFile(LAMBDA, (FIXTURES / "skypilot-lambda-vms.csv").read_bytes())]
    with app.extensions["scalecost.db"].transaction() as session:
        answer = price_imports.run(
            session, "skypilot", files, dry_run=True, actor="t", today=dt.date(2026, 12, 1)
        )
    unmapped = {u["instance_type"]: u["offers"] for u in answer["unmapped"]}
    assert unmapped == {"gpu_1x_gh200": 1}  # skipped and counted: no catalog id for GH200
    assert answer["summary"]["unmapped"] == 1 and answer["summary"]["added"] == 5


def test_the_seed_refresh_adds_a_dated_row_after_each_seeded_price_the_files_hold():
    """tests/prices/refresh_seed.py on the real Lambda rows: the seeded gpu_8x_v100 row (no region) gets the file's
    lowest price over its regions, dated the commit's day; offers the file lacks are listed, not touched."""
    import csv

    from scalecost.store.seeding import effective_from_of

    from .refresh_seed import SEED, STALE_AFTER_DAYS, current_rows, refreshed, stale_count

    rows = list(csv.DictReader(SEED.open(encoding="utf-8")))
    files = [("lambda/vms.csv", (FIXTURES / "skypilot-lambda-vms.csv").read_bytes())]
    day = dt.date(2026, 11, 30)
    new_rows, missing = refreshed(rows, files, "v8", "0f4070387edc953d7004cff197940e1918a1d6aa", day)
    added = new_rows[len(rows) :]
    by_type = {r["instance_type"]: r for r in added}
    assert by_type["gpu_8x_v100"]["usd_per_accelerator_hour"] == "0.79"  # $6.32/h ÷ 8
    assert (
        by_type["gpu_8x_v100"]["as_of"] == "2026-11-30"
        and "@0f407038 ($6.32/h)" in by_type["gpu_8x_v100"]["source"]
    )
    assert by_type["gpu_8x_h100_sxm5"]["usd_per_accelerator_hour"] == "3.99"
    assert all(r["provider"] == "lambda" for r in added)
    assert any(key[2] == "gpu_1x_a6000" for key in missing)  # the sample lacks it: left as it was
    # each added row replaces its offer's current row: the stale ones among those stop being stale
    current = current_rows(rows)
    key = ("accelerator_id", "provider", "instance_type", "region", "pricing_model")
    replaced = [current[tuple(r[k] for k in key)] for r in added]
    were_stale = sum((day - effective_from_of(r["as_of"])).days > STALE_AFTER_DAYS for r in replaced)
    assert were_stale == 1  # gpu_8x_v100 (2025-H2); the seed's gpu_8x_h100_sxm5 row of 2026-09-28 is not
    before, after = stale_count(rows, day), stale_count(new_rows, day)
    assert after[0] == before[0] - were_stale and after[1] == before[1]
