"""Offers through the API (issue 29): an admin states what a price row sells, plans buy within it, and the bad input
of the issue answers 422 naming the field. Runs on SQLite, and on PostgreSQL when TEST_DATABASE_URL is set."""

from __future__ import annotations

import pytest

H100 = "/v1/accelerators/nvidia-h100-sxm-80gb"
SMALL = {
    "model": {"preset": "llama-2-7b"},
    "training": {"tokens": 1e9, "sequence_length": 4096, "global_batch_size": 256},
}


def _put_price(client, admin_headers, provider: str, body: dict):
    etag = client.get(H100).headers["ETag"]
    return client.put(f"{H100}/prices/{provider}", json=body, headers={**admin_headers, "If-Match": etag})


def test_seeded_rows_state_their_billing_and_start_up(client):
    prices = {p["provider"]: p for p in client.get(H100).json["prices"]}
    aws = prices["aws"]
    assert (aws["billing_increment_seconds"], aws["minimum_billed_seconds"], aws["startup_seconds"]) == (
        1,
        60,
        600,
    )
    assert (
        aws["covers"] == "instance"
        and aws["max_accelerators"] is None
        and aws["accelerators_per_instance"] == 8
    )
    assert prices["lambda"]["billing_increment_seconds"] == 60


def test_an_admin_limits_an_offer_and_plans_stay_within_it(client, admin_headers):
    response = _put_price(client, admin_headers, "aws", {"usd_per_hour": 1.0, "max_accelerators": 16})
    assert response.status_code == 200
    aws = [p for p in response.json["prices"] if p["provider"] == "aws"]
    assert aws[0]["max_accelerators"] == 16 and aws[0]["startup_seconds"] == 600  # carried over
    body = {
        **SMALL,
        "search": {"accelerators": ["nvidia-h100-sxm-80gb"], "providers": ["aws"]},
        "objective": "fastest",
        "results": 20,
    }
    answer = client.post("/v1/plans/training", json=body).json
    assert answer["results"]
    for plan in answer["results"] + answer["frontier"]:
        assert plan["count"] <= 16 and plan["count"] % 8 == 0 and plan["instances"] == plan["count"] // 8
        assert plan["instance_type"] == "p5.48xlarge"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"usd_per_hour": 2.0, "billing_increment_seconds": 0}, "billing_increment_seconds"),
        (
            {"usd_per_hour": 2.0, "accelerators_per_instance": 16, "max_accelerators": 8},
            "accelerators_per_instance",
        ),
        ({"usd_per_hour": 2.0, "covers": "gpu"}, "covers"),
        ({"usd_per_hour": 1e9}, "usd_per_hour"),
        (
            {"usd_per_hour": 2.0, "pricing_model": "spot", "interruptions_per_hour": -0.1},
            "interruptions_per_hour",
        ),
        (
            {"usd_per_hour": 2.0, "pricing_model": "spot", "interruptions_per_hour": 11},
            "interruptions_per_hour",
        ),
    ],
)
def test_bad_offer_terms_are_422_naming_the_field(client, admin_headers, body, field):
    response = _put_price(client, admin_headers, "aws", body)
    assert response.status_code == 422
    assert field in str(response.json["errors"])


def test_a_plan_prices_an_unpriced_part_with_the_callers_price(client):
    body = {
        **SMALL,
        "search": {"accelerators": ["nvidia-h800-sxm-80gb"], "device_counts": [8, 16]},
        "prices": {"nvidia-h800-sxm-80gb": 2.0},
        "objective": "cheapest",
    }
    response = client.post("/v1/plans/training", json=body)
    assert response.status_code == 200, response.json
    best = response.json["best"]
    assert best["price_source"] == "override" and best["usd_per_accelerator_hour"] == 2.0
    assert best["estimate_request"]["cost"]["usd_per_accelerator_hour"] == 2.0
    assert best["estimate"]["cost"]["total_usd"] == pytest.approx(best["total_usd"], rel=1e-9)


@pytest.mark.parametrize(
    ("prices", "field"),
    [
        ({"nvidia-h999": 2.0}, "prices"),
        ({"nvidia-h800-sxm-80gb": 1e9}, "prices"),
        ({"nvidia-h800-sxm-80gb": -2.0}, "prices"),
    ],
)
def test_bad_price_overrides_are_422_naming_the_field(client, prices, field):
    body = {**SMALL, "search": {"accelerators": ["nvidia-h800-sxm-80gb"]}, "prices": prices}
    for path in ("/v1/plans/training", "/v1/plans/inference"):
        if path.endswith("inference"):
            body = {
                "model": {"preset": "llama-3-8b"},
                "workload": {"requests_per_second": 1},
                "slo": {"time_to_first_token_s": 2, "time_per_output_token_s": 0.1},
                "search": {"accelerators": ["nvidia-h800-sxm-80gb"]},
                "prices": prices,
            }
        response = client.post(path, json=body)
        assert response.status_code == 422, (path, response.json)
        assert field in response.json["errors"] or any(k.startswith(field) for k in response.json["errors"])


def test_a_quota_of_zero_means_none_there_not_an_error(client):
    body = {
        **SMALL,
        "search": {"accelerators": ["nvidia-h100-sxm-80gb"]},
        "constraints": {"max_accelerators_per_provider": {"runpod": 0, "lambda": 0}},
        "objective": "cheapest",
        "results": 20,
    }
    response = client.post("/v1/plans/training", json=body)
    assert response.status_code == 200
    assert {p["provider"] for p in response.json["results"]}.isdisjoint({"runpod", "lambda"})
    assert response.json["constraints"]["max_accelerators_per_provider"] == {"runpod": 0, "lambda": 0}


def test_a_serving_fleet_is_bought_in_whole_instances_within_the_quota(client):
    body = {
        "model": {"preset": "llama-3-8b"},
        "workload": {"requests_per_second": 2, "prompt_tokens": 512, "output_tokens": 128},
        "slo": {"time_to_first_token_s": 2, "time_per_output_token_s": 0.1},
        "search": {"accelerators": ["nvidia-h100-sxm-80gb"], "engines": ["vllm"]},
        "constraints": {"max_accelerators_per_provider": {"runpod": 0}},
    }
    answer = client.post("/v1/plans/inference", json=body).json
    assert answer["feasible"]
    for point in [answer["plan"], *answer["frontier"]]:
        assert point["provider"] != "runpod"
        per = point["accelerators_per_instance"]
        assert point["instances"] == -(-point["total_devices"] // per)


def test_an_estimate_takes_prices_for_its_accelerator(client):
    body = {**SMALL, "hardware": {"accelerator": "nvidia-h800-sxm-80gb", "count": 8}}
    unpriced = client.post("/v1/estimates/training", json=body).json
    assert unpriced["cost"]["total_usd"] is None
    priced = client.post(
        "/v1/estimates/training", json={**body, "prices": {"nvidia-h800-sxm-80gb": 2.0}}
    ).json
    assert priced["cost"]["usd_per_accelerator_hour"] == 2.0 and priced["cost"]["price_source"] == "override"
    bad = client.post("/v1/estimates/training", json={**body, "prices": {"nvidia-h999": 2.0}})
    assert bad.status_code == 422 and "prices.nvidia-h999" in bad.json["errors"]
    serving = {
        "model": {"preset": "llama-3-8b"},
        "hardware": {"accelerator": "nvidia-h800-sxm-80gb", "count": 1},
        "prices": {"nvidia-h800-sxm-80gb": 2.0},
    }
    answer = client.post("/v1/estimates/inference", json=serving).json
    assert answer["cost"]["usd_per_hour"] == pytest.approx(2.0)


def test_an_admin_states_a_spot_rate_and_estimates_on_spot_add_its_evictions(client, admin_headers):
    body = {"usd_per_hour": 2.5, "pricing_model": "spot", "interruptions_per_hour": 0.05}
    response = _put_price(client, admin_headers, "aws", body)
    assert response.status_code == 200, response.json
    (spot,) = [p for p in response.json["prices"] if p["pricing_model"] == "spot"]
    assert spot["interruptions_per_hour"] == 0.05
    run = {**SMALL, "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 64}}
    on_demand = client.post("/v1/estimates/training", json={**run, "cost": {"provider": "aws"}}).json
    answer = client.post(
        "/v1/estimates/training", json={**run, "cost": {"provider": "aws", "pricing_model": "spot"}}
    ).json
    assert answer["cost"]["price_source"]["interruptions_per_hour"] == 0.05
    assert answer["time"]["evictions"] > 0.0 and on_demand["time"]["evictions"] == 0.0
    assert answer["time"]["seconds"] > on_demand["time"]["seconds"]
