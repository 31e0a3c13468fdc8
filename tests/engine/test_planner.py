"""The serving planner at the engine: its best plan is never beaten by a random deployment of its own search
space evaluated through the single-estimate path; its frontier is a Pareto set; its exclusions add up."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from scalecost.engine import InvalidRequest, estimate_inference
from scalecost.engine.inference.model.formats import default_kv_precision, resolve_weight_format
from scalecost.engine.inference.planner import plan_serving
from scalecost.engine.inference.search.rank import replicas_needed

BODY = {
    "model": {"preset": "mixtral-8x7b"},
    "workload": {"output_tokens_per_second": 3000, "prompt_tokens": 1024, "output_tokens": 200},
    "slo": {"time_to_first_token_s": 2.0, "time_per_output_token_s": 0.05, "max_utilization": 0.8},
    "search": {
        "accelerators": [
            "nvidia-a100-sxm-80gb",
            "nvidia-h100-sxm-80gb",
            "nvidia-l40s",
            "amd-mi300x",
            "nvidia-a10g",
        ],
        "engines": ["vllm", "tensorrt-llm", "hf-transformers"],
        "devices_per_replica": [1, 2, 4, 8],
        "formats": [{"precision": "bf16"}, {"precision": "fp8"}, {"format": "awq"}],
        "kv_cache_precisions": ["fp16", "fp8"],
        "max_batch_size": 128,
    },
    "cost": {"infrastructure_overhead": 0.1},
}


@pytest.fixture(scope="module")
def answer(catalog):
    return plan_serving(BODY, catalog)


def _fleet_cost(estimate, demand_rps, utilization):
    """The fleet bought as whole instances of the estimate's offer (replicas pack into instances)."""
    replicas = float(replicas_needed(demand_rps, estimate["throughput"]["requests_per_second"], utilization))
    per = estimate["cost"]["price_source"]["accelerators_per_instance"]
    devices = replicas * estimate["hardware"]["count"]
    return math.ceil(devices / per) * per / estimate["hardware"]["count"] * estimate["cost"]["usd_per_hour"]


def test_the_best_plan_is_never_beaten_by_random_deployments(answer, catalog):
    assert answer["feasible"], answer["nearest_misses"]
    best = answer["plan"]["cost"]["usd_per_hour"]
    search, slo = BODY["search"], BODY["slo"]
    demand = BODY["workload"]["output_tokens_per_second"] / BODY["workload"]["output_tokens"]
    rng, met = random.Random(7), 0
    for _ in range(600):
        acc = rng.choice(search["accelerators"])
        body = {
            "model": BODY["model"],
            "weights": rng.choice(search["formats"]),
            "engine": rng.choice(search["engines"]),
            "kv_cache_precision": rng.choice(search["kv_cache_precisions"]),
            "batch_size": rng.randint(1, search["max_batch_size"]),
            "prompt_tokens": 1024,
            "output_tokens": 200,
            "hardware": {"accelerator": acc, "count": rng.choice(search["devices_per_replica"])},
            "output": {"suggestions": False, "recommendations": False},
        }
        providers = sorted({p.provider for p in catalog.prices.get(acc, ())})
        costs = []
        for provider in providers:
            try:
                est = estimate_inference(
                    {**body, "cost": {"provider": provider, "infrastructure_overhead": 0.1}}, catalog
                )
            except InvalidRequest:
                break  # this engine/format/KV/count cannot run there: outside the feasible space
            lat = est["latency"]
            if not est["memory"]["fits"] or lat["time_to_first_token_s"] > slo["time_to_first_token_s"]:
                break
            if lat["time_per_output_token_s"] > slo["time_per_output_token_s"]:
                break
            costs.append(_fleet_cost(est, demand, slo["max_utilization"]))
        if costs:
            met += 1
            assert min(costs) >= best * (1 - 1e-9), (body, min(costs), best)
    assert met >= 20


def test_the_frontier_is_a_pareto_set_starting_at_the_plan(answer):
    points = [(p["cost"]["usd_per_hour"], p["latency"]["end_to_end_s"]) for p in answer["frontier"]]
    assert points[0][0] == answer["plan"]["cost"]["usd_per_hour"]
    for (c1, l1), (c2, l2) in zip(points, points[1:], strict=False):
        assert c2 > c1 and l2 < l1  # dearer only when faster


def test_exclusions_and_feasible_add_up_to_the_configurations_considered(answer):
    stats = answer["search"]
    assert (
        sum(answer["exclusions"].values()) + stats["configurations_feasible"]
        == stats["configurations_considered"]
    )
    assert stats["configurations_evaluated"] <= stats["configurations_considered"]
    # a10g: no fp8 → unsupported format; transformers: no fp8 KV → unsupported KV; 2^k degrees of 32 heads all valid
    assert (
        answer["exclusions"]["unsupported_format"] > 0
        and answer["exclusions"]["unsupported_kv_precision"] > 0
    )


def test_the_plan_meets_its_slos_when_re_estimated(answer, catalog):
    est = estimate_inference(answer["plan"]["estimate_request"], catalog)
    assert est["devices_needed"]["targets_met"] is True
    assert est["latency"]["time_per_output_token_s"] == answer["plan"]["latency"]["time_per_output_token_s"]


def test_unsupported_engine_is_counted(catalog):
    body = {
        **BODY,
        "search": {**BODY["search"], "accelerators": ["google-tpu-v5e"], "engines": ["tensorrt-llm"]},
    }
    result = plan_serving(body, catalog)
    assert result["plan"] is None
    assert result["exclusions"]["unsupported_engine"] == result["search"]["configurations_considered"]
    assert result["nearest_misses"][0]["objective"] == "search_space"
    assert "unsupported engine" in result["nearest_misses"][0]["message"]


def default_kv(engine: str, weights: dict) -> str:
    fmt, _ = resolve_weight_format(engine, weights.get("precision"), weights.get("format"))
    assert fmt is not None
    return default_kv_precision(engine, fmt)


def test_on_a_small_space_the_plan_is_the_brute_force_minimum(catalog):
    """Every configuration of a small space through estimate_inference, one by one: the planner's plan is the
    cheapest that meets both objectives, and its feasible count is the brute force's."""
    search = {
        "accelerators": ["nvidia-l4", "nvidia-a100-sxm-80gb"],
        "engines": ["vllm", "llama.cpp"],
        "devices_per_replica": [1, 2],
        "formats": [{"precision": "bf16"}, {"precision": "int4"}],
        "max_batch_size": 24,
    }
    body = {
        "model": {"preset": "llama-3-8b"},
        "workload": {"requests_per_second": 7, "prompt_tokens": 300, "output_tokens": 120},
        "slo": {"time_to_first_token_s": 0.4, "time_per_output_token_s": 0.03},
        "search": search,
    }
    answer = plan_serving(body, catalog)
    costs, feasible = [], 0
    for acc in search["accelerators"]:
        for provider in sorted({p.provider for p in catalog.prices[acc]}):
            for engine in search["engines"]:
                for weights in search["formats"]:
                    for count, kv in itertools.product(search["devices_per_replica"], (None, "fp8")):
                        # without search.kv_cache_precisions the plan tries the engine's default and an FP8
                        # cache, the latter only where it is supported and not the default already
                        if kv and default_kv(engine, weights) == kv:
                            continue
                        for batch in range(1, search["max_batch_size"] + 1):
                            request = {
                                "model": body["model"],
                                "weights": weights,
                                "engine": engine,
                                **({"kv_cache_precision": kv} if kv else {}),
                                "batch_size": batch,
                                "prompt_tokens": 300,
                                "output_tokens": 120,
                                "hardware": {"accelerator": acc, "count": count},
                                "cost": {"provider": provider},
                                "output": {"suggestions": False, "recommendations": False},
                            }
                            try:
                                est = estimate_inference(request, catalog)
                            except InvalidRequest:
                                continue
                            lat = est["latency"]
                            # the plan holds its objectives at slo.percentile (p90) where the scheduler gives
                            # percentiles (continuous batching), else at the single value (static batches)
                            ttft, tpot = (
                                (lat[k] if lat["percentiles"] is None else lat["percentiles"][k]["p90"])
                                for k in ("time_to_first_token_s", "time_per_output_token_s")
                            )
                            if not est["memory"]["fits"] or ttft > 0.4 or tpot > 0.03:
                                continue
                            feasible += 1
                            costs.append(_fleet_cost(est, 7, 1.0))
    assert feasible == answer["search"]["configurations_feasible"] > 0
    assert min(costs) == pytest.approx(answer["plan"]["cost"]["usd_per_hour"], rel=1e-12)


def test_the_replica_bound_is_a_nearest_miss_of_its_own(catalog):
    body = {**BODY, "search": {**BODY["search"], "max_replicas": 1}, "workload": {"requests_per_second": 500}}
    result = plan_serving(body, catalog)
    assert result["plan"] is None and result["exclusions"]["too_many_replicas"] > 0
    (miss,) = [m for m in result["nearest_misses"] if m["objective"] == "replicas"]
    assert miss["value"] > 1 and "search.max_replicas is 1" in miss["message"]


def test_output_tokens_per_second_is_requests_times_output_tokens(catalog):
    by_tokens = plan_serving(BODY, catalog)
    by_requests = plan_serving(
        {**BODY, "workload": {"requests_per_second": 15, "prompt_tokens": 1024, "output_tokens": 200}},
        catalog,
    )
    assert by_tokens["workload"]["requests_per_second"] == 15
    assert by_tokens["plan"] == by_requests["plan"]


def test_exclusion_counts_are_worded_in_the_callers_language(catalog):
    from scalecost import i18n
    from scalecost.engine.i18n import using

    body = {
        **BODY,
        "search": {**BODY["search"], "accelerators": ["google-tpu-v5e"], "engines": ["tensorrt-llm"]},
    }
    english = plan_serving(body, catalog)["nearest_misses"][0]["message"]
    with using(i18n.language("es")):
        spanish = plan_serving(body, catalog)["nearest_misses"][0]["message"]
    assert english.startswith("Every configuration was excluded before it could be evaluated: ")
    assert english.endswith(" unsupported engine.") and spanish.endswith(" motor no compatible.")
