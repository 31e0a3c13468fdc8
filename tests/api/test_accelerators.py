"""Catalog read endpoints: filters, pagination, item, 404 and ETag."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

from scalecost.store.models import AcceleratorPrice

REQUIRED_IDS = {
    "nvidia-v100-sxm-32gb",
    "nvidia-t4",
    "nvidia-a10g",
    "nvidia-l4",
    "nvidia-l40s",
    "nvidia-a100-sxm-40gb",
    "nvidia-a100-sxm-80gb",
    "nvidia-a100-pcie-80gb",
    "nvidia-h100-sxm-80gb",
    "nvidia-h100-pcie-80gb",
    "nvidia-h200-sxm-141gb",
    "nvidia-b200",
    "nvidia-rtx-3090",
    "nvidia-rtx-4090",
    "nvidia-rtx-a6000",
    "nvidia-rtx-6000-ada",
    "amd-mi300x",
    "google-tpu-v4",
    "google-tpu-v5e",
    "google-tpu-v5p",
    "aws-trainium2",
    "intel-gaudi2",
    "apple-m2-ultra",
    "apple-m3-max",
    "cpu-2s-xeon-spr",
}


def _all_ids(client, query: str = "") -> list[str]:
    response = client.get(f"/v1/accelerators?page_size=100{query}")
    assert response.status_code == 200
    return [item["id"] for item in response.json]


def test_catalog_contains_every_required_accelerator(client):
    assert REQUIRED_IDS <= set(_all_ids(client))


def test_filters_by_kind_vendor_and_memory(client):
    tpus = client.get("/v1/accelerators?kind=tpu&page_size=100").json
    assert tpus and all(a["kind"] == "tpu" for a in tpus)
    amd = client.get("/v1/accelerators?vendor=amd&page_size=100").json
    assert {a["vendor"] for a in amd} == {"AMD"}
    big = client.get("/v1/accelerators?min_memory_bytes=140000000000&page_size=100").json
    assert big and all(a["memory_bytes"] >= 140e9 for a in big)
    assert "nvidia-h200-sxm-141gb" in {a["id"] for a in big}


def test_pagination_metadata_and_pages_cover_the_catalog(client):
    first = client.get("/v1/accelerators?page=1&page_size=10")
    meta = json.loads(first.headers["X-Pagination"])
    assert meta["page"] == 1 and meta["total"] >= len(REQUIRED_IDS)
    seen = []
    for page in range(1, meta["total_pages"] + 1):
        seen += [a["id"] for a in client.get(f"/v1/accelerators?page={page}&page_size=10").json]
    assert len(seen) == len(set(seen)) == meta["total"]


def test_item_has_specs_dense_peaks_prices_and_sources(client):
    response = client.get("/v1/accelerators/nvidia-h100-sxm-80gb")
    assert response.status_code == 200 and response.headers["ETag"]
    item = response.json
    assert item["memory_bytes"] == 81559 * 2**20  # as nvidia-smi reports it (seed/accelerator_memory.csv)
    assert item["peak_flops_per_s"]["bf16"] == 989e12  # dense, not the 1979 sparse figure
    assert item["peak_flops_per_s"]["int4"] is None
    assert {p["provider"] for p in item["prices"]} >= {"aws", "lambda", "runpod"}
    aws = next(p for p in item["prices"] if p["provider"] == "aws")
    assert aws["usd_per_hour"] == "6.880000" and aws["effective_to"] is None  # the June-2025 cut is current
    assert item["default_usd_per_hour"] == "2.990000"
    assert item["sources"]["specs"]


def test_unsupported_precisions_are_null_not_zero(client):
    a100 = client.get("/v1/accelerators/nvidia-a100-sxm-80gb").json
    assert a100["peak_flops_per_s"]["fp8"] is None
    apple = client.get("/v1/accelerators/apple-m3-max").json
    assert apple["default_usd_per_hour"] is None and apple["prices"] == []


def test_tpu_memory_is_what_xla_leaves_of_the_gib_part(client):
    """TPU capacities are in GiB (v4: 32 GiB), less the runtime reserve XLA reports (772 MiB measured on a v6e,
    vllm-project/vllm PR #16211; seed/accelerator_memory.csv)."""
    assert client.get("/v1/accelerators/google-tpu-v4").json["memory_bytes"] == (32 * 1024 - 772) * 2**20
    assert client.get("/v1/accelerators/google-tpu-v6e").json["memory_bytes"] == 33_550_237_696


def test_unknown_accelerator_is_404_problem(client):
    response = client.get("/v1/accelerators/nvidia-h900")
    assert response.status_code == 404 and response.mimetype == "application/problem+json"
    assert "nvidia-h900" in response.json["detail"]


def test_if_none_match_gives_304_and_etag_changes_with_prices(app, client):
    first = client.get("/v1/accelerators/nvidia-l4")
    etag = first.headers["ETag"]
    assert client.get("/v1/accelerators/nvidia-l4", headers={"If-None-Match": etag}).status_code == 304
    database = app.extensions["scalecost.db"]
    with database.transaction() as session:
        session.add(
            AcceleratorPrice(
                accelerator_id="nvidia-l4",
                provider="gcp",
                usd_per_hour=Decimal("0.71"),
                effective_from=dt.date(2026, 1, 1),
                created_by="test",
            )
        )
    assert client.get("/v1/accelerators/nvidia-l4").headers["ETag"] != etag


def test_a_listing_names_the_cheapest_price_per_provider_however_many_regions_were_imported(app, client):
    """Issue 28: an import of every region and instance type made 100-accelerator pages of 1.1 MB (3.4 MB with
    8,000 rows), serialised on the worker's loop. A listing now carries the cheapest open row per provider,
    pricing model and covers, and `prices_total`; the item lists every row."""
    database = app.extensions["scalecost.db"]
    with database.transaction() as session:
        for i in range(300):
            for model in ("on-demand", "spot"):
                session.add(
                    AcceleratorPrice(
                        accelerator_id="nvidia-l4",
                        provider="regional",
                        instance_type=f"g-{i}",
                        region=f"region-{i}",
                        pricing_model=model,
                        usd_per_hour=Decimal("0.50")
                        + Decimal(i) / 100
                        + (Decimal("0") if model == "spot" else 1),
                        effective_from=dt.date(2026, 1, 1),
                        created_by="test",
                    )
                )
    item = client.get("/v1/accelerators/nvidia-l4").json
    listing = client.get("/v1/accelerators?page_size=100")
    l4 = next(a for a in listing.json if a["id"] == "nvidia-l4")
    regional = [p for p in l4["prices"] if p["provider"] == "regional"]
    assert [(p["pricing_model"], p["usd_per_hour"], p["region"]) for p in regional] == [
        ("spot", "0.500000", "region-0"),
        ("on-demand", "1.500000", "region-0"),
    ]
    assert l4["prices_total"] == item["prices_total"] == len(item["prices"]) >= 600
    assert {p["provider"] for p in l4["prices"]} == {p["provider"] for p in item["prices"]}
    assert l4["default_usd_per_hour"] == item["default_usd_per_hour"]
    usd = [Decimal(p["usd_per_hour"]) for p in l4["prices"]]
    assert usd == sorted(usd)
    assert len(listing.data) < 200_000, len(listing.data)  # 600 rows listed in full: about 300 KB more
