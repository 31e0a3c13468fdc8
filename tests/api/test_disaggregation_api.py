"""serving.disaggregation through HTTP (issue 30 §3): named 422s for bad pools, and the serving planner's pools
follow the documented schema and are reproduced by the estimate body they hand back."""

from __future__ import annotations

import pytest

from tests.contract.strict_schema import StrictContract, committed_spec

H100 = "nvidia-h100-sxm-80gb"
ESTIMATE = {
    "model": {"preset": "llama-3-70b"},
    "weights": {"precision": "fp8"},
    "prompt_tokens": 6000,
    "output_tokens": 300,
    "hardware": {"accelerator": H100, "count": 4},
    "workload": {"requests_per_second": 2.0},
    "output": {"suggestions": False, "recommendations": False},
}
PLAN = {
    "model": {"preset": "llama-3-70b"},
    "workload": {"requests_per_second": 20, "prompt_tokens": 6000, "output_tokens": 300},
    "slo": {"time_to_first_token_s": 1.5, "time_per_output_token_s": 0.025},
    "search": {"accelerators": [H100], "engines": ["vllm"], "disaggregation": True},
}


def _pools(prefill: dict, decode: dict) -> dict:
    return {"serving": {"disaggregation": {"prefill": prefill, "decode": decode}}}


@pytest.mark.parametrize(
    "change, field",
    [
        (
            _pools({"tensor_parallel": 4, "replicas": 0}, {"replicas": 1}),
            "serving.disaggregation.prefill.replicas",
        ),
        (_pools({"tensor_parallel": 4, "replicas": 1}, {}), "serving.disaggregation.decode.replicas"),
        (
            _pools({"tensor_parallel": 3, "replicas": 1}, {"tensor_parallel": 4, "replicas": 1}),
            "serving.disaggregation.prefill.tensor_parallel",
        ),
        (
            _pools({"tensor_parallel": 4, "replicas": 1}, {"accelerator": "nvidia-h900", "replicas": 1}),
            "serving.disaggregation.decode.accelerator",
        ),
        (
            _pools({"tensor_parallel": 4, "replicas": 1}, {"tensor_parallel": 4, "replicas": 1, "x": 1}),
            "serving.disaggregation.decode.x",
        ),
    ],
)
def test_bad_pools_are_422_naming_the_field(client, change, field):
    response = client.post("/v1/estimates/inference", json={**ESTIMATE, **change})
    assert response.status_code == 422, response.json
    assert field in response.json["errors"], response.json["errors"]


def test_a_bad_search_disaggregation_is_422(client):
    response = client.post(
        "/v1/plans/inference", json={**PLAN, "search": {**PLAN["search"], "disaggregation": 3}}
    )
    assert response.status_code == 422
    assert "search.disaggregation" in response.json["errors"]


def test_the_plans_pools_follow_the_schema_and_their_estimate_body_reproduces_them(client):
    response = client.post("/v1/plans/inference", json=PLAN)
    assert response.status_code == 200, response.json
    answer = response.json
    assert StrictContract(committed_spec()).errors("ServingPlan", answer) == []
    assert answer["disaggregated"] is True
    pools = answer["disaggregated_serving"]["plan"]
    estimate = client.post("/v1/estimates/inference", json=pools["estimate_request"])
    assert estimate.status_code == 200, estimate.json
    est = estimate.json
    assert est["devices_needed"]["targets_met"] is True
    assert est["cost"]["usd_per_hour"] == pytest.approx(pools["cost"]["usd_per_hour"], rel=1e-9)
    split = est["load"]["disaggregation"]
    assert (split["prefill"]["replicas"], split["decode"]["replicas"]) == (
        pools["prefill"]["replicas"],
        pools["decode"]["replicas"],
    )
