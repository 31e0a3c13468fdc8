"""Issue 9, defect 3: one admin value must not break estimates for everyone.

The admin schemas refuse values outside physical bounds; a catalog row that is out of bounds anyway (written
before the bounds, or by hand in SQL) is set aside by the engine's Catalog: estimates on it are a 422 naming
it, and catalog scans skip it with a note instead of failing."""

from __future__ import annotations

import pytest
from scalecost.api.extensions.db import invalidate_catalog
from scalecost.store.models import Accelerator
from sqlalchemy import update

H100 = "/v1/accelerators/nvidia-h100-sxm-80gb"
TRAINING = {
    "model": {"preset": "llama-2-7b"},
    "training": {"tokens": "1B", "global_batch_size": 64, "sequence_length": 4096},
    "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 16},
}
INFERENCE_SCAN = {"model": {"preset": "llama-3-8b"}, "hardware": {"accelerator": "nvidia-l4", "count": 1}}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("interconnect_bandwidth_bytes_per_s", 5e-324),
        ("interconnect_bandwidth_bytes_per_s", 1e7),
        ("memory_bandwidth_bytes_per_s", 1.0),
        ("memory_bytes", 1000),
        ("tdp_watts", 1e-300),
        ("memory_bandwidth_bytes_per_s", 1e30),
    ],
)
def test_patch_refuses_values_outside_physical_bounds(client, admin_headers, field, value):
    etag = client.get(H100).headers["ETag"]
    response = client.patch(H100, json={field: value}, headers={**admin_headers, "If-Match": etag})
    assert response.status_code == 422, response.json
    assert field in response.json["errors"]
    assert "between" in response.json["errors"][field][0]


def test_patch_refuses_a_tiny_peak(client, admin_headers):
    etag = client.get(H100).headers["ETag"]
    response = client.patch(
        H100, json={"peak_flops_per_s": {"bf16": 5e-324}}, headers={**admin_headers, "If-Match": etag}
    )
    assert response.status_code == 422 and "peak_flops_per_s.bf16" in response.json["errors"]


def _break_h100_in_the_database(app) -> None:
    """What the old schema let through (5e-324 was 'above 0'), written where the schema cannot refuse it."""
    with app.extensions["scalecost.db"].transaction() as session:
        session.execute(
            update(Accelerator)
            .where(Accelerator.id == "nvidia-h100-sxm-80gb")
            .values(interconnect_bandwidth_bytes_per_s=5e-324, version=Accelerator.version + 1)
        )
    with app.app_context():  # another process's write is seen within CATALOG_CACHE_TTL_S; do not wait
        invalidate_catalog()


def test_an_out_of_bounds_row_is_a_422_for_itself_and_skipped_by_every_scan(client, app, editor_headers):
    saved = client.post(
        "/v1/scenarios",
        json={"name": "h100-plan", "kind": "training", "request": TRAINING},
        headers=editor_headers,
    )
    assert saved.status_code == 201
    _break_h100_in_the_database(app)

    on_it = client.post("/v1/estimates/training", json=TRAINING)
    assert on_it.status_code == 422, on_it.json
    assert "nvidia-h100-sxm-80gb" in on_it.json["errors"]["hardware.accelerator"][0]

    other = {**TRAINING, "hardware": {"accelerator": "nvidia-a100-sxm-80gb", "count": 16}}
    response = client.post("/v1/estimates/training", json=other)
    assert response.status_code == 200, response.json
    assert any("nvidia-h100-sxm-80gb" in n for n in response.json["assumptions"]["notes"])

    scan = client.post("/v1/estimates/inference", json=INFERENCE_SCAN)
    assert scan.status_code == 200, scan.json
    assert all(s["accelerator"] != "nvidia-h100-sxm-80gb" for s in scan.json["suggestions"])
    assert any("nvidia-h100-sxm-80gb" in n for n in scan.json["notes"])

    repriced = client.get(f"/v1/scenarios/{saved.json['id']}/estimate", headers=editor_headers)
    assert repriced.status_code == 422, repriced.json


@pytest.mark.parametrize(("value", "status"), [(9e15, 200), (None, 200), (1e17, 422), (5e8, 422)])
def test_patch_bounds_the_fp4_peak_as_every_other_peak(client, admin_headers, value, status):
    etag = client.get(H100).headers["ETag"]
    response = client.patch(
        H100, json={"peak_flops_per_s": {"fp4": value}}, headers={**admin_headers, "If-Match": etag}
    )
    assert response.status_code == status, response.json
    if status == 422:
        assert "between" in response.json["errors"]["peak_flops_per_s.fp4"][0]
    else:
        assert client.get(H100).json["peak_flops_per_s"]["fp4"] == value
