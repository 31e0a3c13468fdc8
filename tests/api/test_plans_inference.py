"""POST /v1/plans/inference: the plan is reproduced by the estimate it hands back, is never beaten by random
deployments of the same search space, nothing-feasible is a 200 with nearest misses, bad input a 422."""

from __future__ import annotations

import math
import random

import pytest

from tests.contract.strict_schema import StrictContract, committed_spec

BODY = {
    "model": {"preset": "llama-3-8b"},
    "workload": {"requests_per_second": 20, "prompt_tokens": 512, "output_tokens": 256},
    "slo": {"time_to_first_token_s": 0.5, "time_per_output_token_s": 0.03},
    "search": {
        "accelerators": [
            "nvidia-l4",
            "nvidia-a10g",
            "nvidia-h100-sxm-80gb",
            "nvidia-rtx-4090",
            "nvidia-l40s",
        ],
        "engines": ["vllm", "llama.cpp"],
        "devices_per_replica": [1, 2, 4],
        "formats": [{"precision": "bf16"}, {"precision": "int4"}, {"format": "awq"}],
        "max_batch_size": 64,
    },
}
RELATIVE = 1e-9


def _plan(client, body):
    response = client.post("/v1/plans/inference", json=body)
    assert response.status_code == 200, response.json
    return response.json


def _fleet_usd_per_hour(est, replicas):
    """`replicas` of the estimated replica bought as whole instances of its offer (replicas pack into instances)."""
    per = est["cost"]["price_source"]["accelerators_per_instance"]
    devices = est["hardware"]["count"]
    return math.ceil(replicas * devices / per) * per / devices * est["cost"]["usd_per_hour"]


def _close(a, b):
    return abs(a - b) <= RELATIVE * max(abs(a), abs(b))


def _estimate(client, body):
    response = client.post("/v1/estimates/inference", json=body)
    assert response.status_code == 200, response.json
    return response.json


def _replicas(demand, replica_rps, utilization=1.0):
    import math

    return max(math.ceil(demand / (utilization * replica_rps) * (1.0 - 1e-12)), 1)


def test_the_plan_and_every_frontier_point_are_reproduced_by_their_estimate_body(client):
    answer = _plan(client, BODY)
    assert answer["feasible"] and answer["plan"] and answer["frontier"]
    assert answer["frontier"][0]["cost"]["usd_per_hour"] == answer["plan"]["cost"]["usd_per_hour"]
    for point in [answer["plan"], *answer["frontier"]]:
        est = _estimate(client, point["estimate_request"])
        assert est["devices_needed"]["targets_met"] is True and est["memory"]["fits"] is True
        lat, cost = est["latency"], est["cost"]
        assert _close(lat["time_to_first_token_s"], point["latency"]["time_to_first_token_s"])
        assert _close(lat["time_per_output_token_s"], point["latency"]["time_per_output_token_s"])
        assert lat["time_to_first_token_s"] <= BODY["slo"]["time_to_first_token_s"]
        assert lat["time_per_output_token_s"] <= BODY["slo"]["time_per_output_token_s"]
        rps = est["throughput"]["requests_per_second"]
        assert _close(rps, point["throughput"]["requests_per_second_per_replica"])
        replicas = _replicas(BODY["workload"]["requests_per_second"], rps)
        assert replicas == point["replicas"]
        assert _close(_fleet_usd_per_hour(est, replicas), point["cost"]["usd_per_hour"])
        at_capacity = point["cost"]["at_capacity"]
        assert _close(cost["usd_per_million_input_tokens"], at_capacity["usd_per_million_input_tokens"])
        assert _close(
            cost["usd_per_million_output_tokens"], at_capacity["usd_per_million_output_tokens_all_time"]
        )
    costs = [p["cost"]["usd_per_hour"] for p in answer["frontier"]]
    latencies = [p["latency"]["end_to_end_s"] for p in answer["frontier"]]
    assert costs == sorted(costs) and latencies == sorted(latencies, reverse=True)


@pytest.mark.parametrize("percentile", ["p50", "p90", "p99"])
def test_the_answer_shows_the_latencies_its_objectives_were_held_at(client, percentile):
    """Issue 30: the plan states slo.percentile and, for every continuous-batching deployment, the p50/p90/p99 it
    was checked at; the plan's latencies at that percentile meet the objectives, the scalar fields stay the p50."""
    body = {**BODY, "slo": {**BODY["slo"], "percentile": percentile}}
    body["search"] = {**BODY["search"], "engines": ["vllm"]}
    answer = _plan(client, body)
    assert answer["slo"]["percentile"] == percentile
    for d in [answer["plan"], *answer["frontier"]]:
        latency = d["latency"]
        assert latency["percentile"] == percentile
        for metric, objective in body["slo"].items():
            if metric == "percentile":
                continue
            at = latency["percentiles"][metric]
            assert at[percentile] <= objective * (1 + 1e-9), (metric, at, objective)
            assert at["p50"] == latency[metric]
            assert at["p50"] <= at["p90"] <= at["p99"]


def test_static_batches_have_no_percentiles_in_the_plan(client):
    body = {**BODY, "search": {**BODY["search"], "engines": ["llama.cpp"]}}
    answer = _plan(client, body)
    assert answer["plan"]["latency"]["percentile"] is None
    assert answer["plan"]["latency"]["percentiles"] is None


def test_input_and_output_prices_pay_for_every_request(client):
    plan = _plan(client, BODY)["plan"]
    c, w = plan["cost"], BODY["workload"]
    per_request = (
        c["usd_per_million_input_tokens"] * w["prompt_tokens"]
        + c["usd_per_million_output_tokens"] * w["output_tokens"]
    ) / 1e6
    assert _close(per_request, c["usd_per_request"])
    assert _close(c["usd_per_request"] * w["requests_per_second"] * 3600, c["usd_per_hour"])


def _random_deployment(rng: random.Random) -> dict:
    search = BODY["search"]
    return {
        "model": BODY["model"],
        "weights": rng.choice(search["formats"]),
        "engine": rng.choice(search["engines"]),
        "batch_size": rng.randint(1, search["max_batch_size"]),
        "prompt_tokens": BODY["workload"]["prompt_tokens"],
        "output_tokens": BODY["workload"]["output_tokens"],
        "hardware": {
            "accelerator": rng.choice(search["accelerators"]),
            "count": rng.choice(search["devices_per_replica"]),
        },
        "output": {"suggestions": False, "recommendations": False},
    }


def test_no_random_deployment_of_the_space_is_cheaper_while_meeting_the_slos(client):
    answer = _plan(client, BODY)
    best = answer["plan"]["cost"]["usd_per_hour"]
    rng, met, items = random.Random(12), 0, [_random_deployment(random.Random(12 + i)) for i in range(300)]
    del rng
    results = client.post("/v1/estimates/inference/batch", json={"items": items}).json["results"]
    for item, result in zip(items, results, strict=True):
        if result["status"] != 200:
            continue  # an engine/format/device count the accelerator cannot run: outside the feasible space
        est = result["estimate"]
        lat = est["latency"]
        if not est["memory"]["fits"] or lat["time_to_first_token_s"] > BODY["slo"]["time_to_first_token_s"]:
            continue
        if lat["time_per_output_token_s"] > BODY["slo"]["time_per_output_token_s"]:
            continue
        met += 1
        # the cheapest provider of this accelerator, as the planner prices it
        priced = client.post(
            "/v1/estimates/inference/batch",
            json={
                "items": [
                    {**item, "cost": {"provider": p}} for p in ("aws", "gcp", "azure", "lambda", "runpod")
                ]
            },
        ).json["results"]
        replicas = _replicas(
            BODY["workload"]["requests_per_second"], est["throughput"]["requests_per_second"]
        )
        fleet = min(_fleet_usd_per_hour(r["estimate"], replicas) for r in priced if r["status"] == 200)
        assert fleet >= best * (1 - RELATIVE), (item, fleet, best)
    assert met >= 10  # the check compared against a fair number of feasible deployments


def test_the_answer_follows_the_documented_schema(client):
    contract = StrictContract(committed_spec())
    for body in (BODY, {**BODY, "slo": {"time_to_first_token_s": 0.001, "time_per_output_token_s": 0.001}}):
        assert contract.errors("ServingPlan", _plan(client, body)) == []


def test_nothing_feasible_is_200_with_the_nearest_misses(client):
    body = {**BODY, "slo": {"time_to_first_token_s": 0.001, "time_per_output_token_s": 0.03}}
    answer = _plan(client, body)
    assert answer["feasible"] is False and answer["plan"] is None and answer["frontier"] == []
    misses = {m["objective"]: m for m in answer["nearest_misses"]}
    ttft = misses["time_to_first_token_s"]
    assert ttft["message"].startswith("The lowest TTFT reachable is") and ttft["value"] > 0.001
    assert _close(
        _estimate(client, ttft["deployment"]["estimate_request"])["latency"]["time_to_first_token_s"],
        ttft["value"],
    )
    assert answer["exclusions"]["misses_ttft"] > 0
    stats = answer["search"]
    assert (
        stats["configurations_considered"]
        == sum(answer["exclusions"].values()) + stats["configurations_feasible"]
    )


def test_a_model_that_fits_nowhere_says_so(client):
    body = {
        **BODY,
        "model": {"preset": "llama-2-70b"},
        "search": {**BODY["search"], "accelerators": ["nvidia-l4"], "devices_per_replica": [1]},
    }
    answer = _plan(client, body)
    assert answer["plan"] is None and answer["nearest_misses"][0]["objective"] == "memory"
    assert answer["exclusions"]["does_not_fit"] > 0


@pytest.mark.parametrize(
    "change, field",
    [
        ({"search": {"engines": []}}, "search.engines"),
        ({"search": {"engines": ["vllm2"]}}, "search.engines.0"),
        ({"search": {"devices_per_replica": [0]}}, "search.devices_per_replica.0"),
        ({"search": {"accelerators": ["nvidia-h900"]}}, "search.accelerators.0"),
        ({"search": {"accelerators": ["nvidia-rtx-5090"]}}, "search.accelerators.0"),  # no price
        ({"search": {"providers": ["nocloud"]}}, "search.providers.0"),
        ({"search": {"max_batch_size": 100_000}}, "search.max_batch_size"),
        ({"slo": {"time_to_first_token_s": 0, "time_per_output_token_s": 0.04}}, "slo.time_to_first_token_s"),
        ({"slo": {"time_to_first_token_s": 1}}, "slo.time_per_output_token_s"),
        (
            {
                "slo": {
                    "time_to_first_token_s": 1,
                    "time_per_output_token_s": 0.04,
                    "front_end_latency_s": -0.1,
                }
            },
            "slo.front_end_latency_s",
        ),
        ({"workload": {"prompt_tokens": 512}}, "workload.requests_per_second"),
        ({"workload": {"requests_per_second": -1}}, "workload.requests_per_second"),
        ({"workload": {"requests_per_second": 1, "prompt_tokens": 9000}}, "workload.prompt_tokens"),
        ({"model": {"preset": "resnet-50"}}, "model"),
        ({"model": {"preset": "nope"}}, "model.preset"),
    ],
)
def test_bad_input_is_422_naming_the_field(client, change, field):
    response = client.post("/v1/plans/inference", json={**BODY, **change})
    assert response.status_code == 422, response.json
    assert response.content_type == "application/problem+json"
    assert field in response.json["errors"], response.json["errors"]


def test_a_search_space_past_the_bound_is_422_with_the_bound(client):
    body = {
        **BODY,
        "search": {
            "engines": ["vllm", "tensorrt-llm", "llama.cpp", "hf-transformers"],
            "devices_per_replica": list(range(1, 17)),
            "formats": [{"precision": p} for p in ("fp16", "bf16", "fp8", "int8", "int4")]
            + [{"format": "awq"}],
            "kv_cache_precisions": ["fp16", "bf16", "fp8", "int8", "fp32"],
        },
    }
    response = client.post("/v1/plans/inference", json=body)
    assert response.status_code == 422 and "20,000" in response.json["errors"]["search"][0]


def test_a_format_that_contradicts_its_precision_is_422(client):
    body = {**BODY, "search": {**BODY["search"], "formats": [{"precision": "int8", "format": "awq"}]}}
    response = client.post("/v1/plans/inference", json=body)
    assert response.status_code == 422 and "search.formats.0" in response.json["errors"]
    response = client.post(
        "/v1/plans/inference", json={**BODY, "search": {}, "weights": {"precision": "int8", "format": "awq"}}
    )
    assert response.status_code == 422 and "weights.format" in response.json["errors"]


def test_plans_share_the_estimate_budget(migrated_url):
    from scalecost import create_app

    from tests.conftest import reset_rows

    app = create_app(
        {"DATABASE_URL": migrated_url, "RATELIMIT_ESTIMATES": "2 per hour", "RATELIMIT_ENABLED": True}
    )
    reset_rows(app.extensions["scalecost.db"])
    client = app.test_client()
    assert client.post("/v1/plans/inference", json=BODY).status_code == 200
    estimate = {"model": {"preset": "llama-3-8b"}, "hardware": {"accelerator": "nvidia-l4"}}
    assert client.post("/v1/estimates/inference", json=estimate).status_code == 200
    assert client.post("/v1/plans/inference", json=BODY).status_code == 429
    app.extensions["scalecost.db"].dispose()


def test_cost_as_of_prices_the_plan_and_its_estimate_body(client):
    body = {**BODY, "cost": {"as_of": "2026-06-01", "infrastructure_overhead": 0.2}}
    answer = _plan(client, body)
    assert answer["priced_as_of"] == "2026-06-01"
    request = answer["plan"]["estimate_request"]
    assert request["cost"]["as_of"] == "2026-06-01" and request["cost"]["infrastructure_overhead"] == 0.2
    est = _estimate(client, request)
    assert _close(
        _fleet_usd_per_hour(est, answer["plan"]["replicas"]), answer["plan"]["cost"]["usd_per_hour"]
    )


def test_a_stated_front_end_latency_is_held_in_the_plan_and_its_estimate(client):
    """slo.front_end_latency_s through the API: echoed, in the plan's TTFT and in the estimate body it hands back."""
    body = {**BODY, "slo": {**BODY["slo"], "front_end_latency_s": 0.25}}
    answer = _plan(client, body)
    assert answer["slo"]["front_end_latency_s"] == 0.25
    plan = answer["plan"]
    assert plan["estimate_request"]["slo"]["front_end_latency_s"] == 0.25
    assert 0.25 < plan["latency"]["time_to_first_token_s"] <= 0.5
    est = _estimate(client, plan["estimate_request"])
    assert est["load"]["front_end_latency_s"] == 0.25
    assert _close(est["latency"]["time_to_first_token_s"], plan["latency"]["time_to_first_token_s"])
    bad = client.post(
        "/v1/estimates/inference", json={**plan["estimate_request"], "slo": {"front_end_latency_s": 11}}
    )
    assert bad.status_code == 422 and "slo.front_end_latency_s" in bad.json["errors"], bad.json
