"""Batch estimates: up to 1,000 bodies, answered in order, one bad item never fails the others."""

from __future__ import annotations

from scalecost import create_app

from tests.conftest import reset_rows

GOOD = {
    "model": {"preset": "llama-2-7b"},
    "training": {"tokens": "1B", "global_batch_size": 64, "sequence_length": 4096},
    "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 8},
    "output": {"recommendations": False},
}


def test_items_are_answered_in_order_with_their_own_problems(client):
    items = [
        GOOD,
        {**GOOD, "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 0}},  # schema: invalid field
        {**GOOD, "hardware": {"accelerator": "nvidia-h900", "count": 8}},  # engine: impossible
        {**GOOD, "hardware": {"accelerator": "nvidia-a100-sxm-80gb", "count": 16}},
    ]
    response = client.post("/v1/estimates/training/batch", json={"items": items})
    assert response.status_code == 200, response.json
    results = response.json["results"]
    assert [r["index"] for r in results] == [0, 1, 2, 3]
    assert [r["status"] for r in results] == [200, 422, 422, 200]
    assert response.json["succeeded"] == 2 and response.json["failed"] == 2
    assert "hardware.count" in results[1]["problem"]["errors"]
    assert results[1]["problem"]["type"] == "urn:scalecost:problem:invalid-field"
    assert "hardware.accelerator" in results[2]["problem"]["errors"]
    single = client.post("/v1/estimates/training", json=GOOD).json
    assert results[0]["estimate"]["cost"] == single["cost"]
    assert results[3]["estimate"]["memory"]["fits"] in (True, False)


def test_inference_batch(client):
    body = {
        "model": {"preset": "llama-3-8b"},
        "hardware": {"accelerator": "nvidia-l4"},
        "output": {"suggestions": False},
    }
    response = client.post("/v1/estimates/inference/batch", json={"items": [body, {"model": {}}]})
    assert response.status_code == 200
    assert [r["status"] for r in response.json["results"]] == [200, 422]
    assert response.json["results"][0]["estimate"] == client.post("/v1/estimates/inference", json=body).json


def test_empty_and_oversized_batches_are_422_naming_items(client):
    assert client.post("/v1/estimates/training/batch", json={"items": []}).status_code == 422
    too_many = client.post("/v1/estimates/training/batch", json={"items": [GOOD] * 1001})
    assert too_many.status_code == 422 and "items" in too_many.json["errors"]


def test_each_item_counts_against_the_estimate_budget(migrated_url):
    app = create_app(
        {"DATABASE_URL": migrated_url, "RATELIMIT_ESTIMATES": "10 per minute", "RATELIMIT_ENABLED": True}
    )
    reset_rows(app.extensions["scalecost.db"])
    client = app.test_client()
    assert client.post("/v1/estimates/training/batch", json={"items": [GOOD] * 8}).status_code == 200
    assert client.post("/v1/estimates/training/batch", json={"items": [GOOD] * 8}).status_code == 429
    app.extensions["scalecost.db"].dispose()


def test_a_batch_refused_for_the_remaining_budget_is_not_charged(migrated_url):
    """8 of 10 spent: a batch of 5 is refused (429) and charges nothing, so 2 more still go through."""
    app = create_app(
        {"DATABASE_URL": migrated_url, "RATELIMIT_ESTIMATES": "10 per minute", "RATELIMIT_ENABLED": True}
    )
    reset_rows(app.extensions["scalecost.db"])
    client = app.test_client()
    assert client.post("/v1/estimates/training/batch", json={"items": [GOOD] * 8}).status_code == 200
    assert client.post("/v1/estimates/training/batch", json={"items": [GOOD] * 5}).status_code == 429
    assert client.post("/v1/estimates/training/batch", json={"items": [GOOD] * 2}).status_code == 200
    assert client.post("/v1/estimates/training", json=GOOD).status_code == 429  # now all 10 are spent
    app.extensions["scalecost.db"].dispose()


def test_each_answer_of_a_batch_carries_its_estimates_intervals(client):
    """A batch reuses the single estimate: its answers have the same prediction intervals (issue 31 §3)."""
    body = GOOD
    response = client.post("/v1/estimates/training", json=body)
    assert response.status_code == 200, response.json
    single = response.json
    assert single["intervals"]["time"]["seconds"]["p10"] < single["intervals"]["time"]["seconds"]["p90"]
    batch = client.post("/v1/estimates/training/batch", json={"items": [body]}).json["results"][0]["estimate"]
    assert batch["intervals"] == single["intervals"]
    assert batch["assumptions"]["intervals"] == single["assumptions"]["intervals"]
    assert single["assumptions"]["intervals"]["class"] == "training/time/complete_run/cuda"
