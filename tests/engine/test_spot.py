"""Spot capacity (issue 29 §3): an offer the provider may reclaim adds evictions to the run's interruptions (the
goodput model at the offer's rate, the Young/Daly interval it implies, the offer's start-up per restart), so a spot
plan is slower and dearer than its price alone suggests; at a rate of 0 it is the on-demand plan at another price."""

from __future__ import annotations

from dataclasses import replace

import pytest
from scalecost.engine import InvalidRequest, estimate_training, plan_training
from scalecost.engine.offers import (
    DEFAULT_SPOT_INTERRUPTIONS_PER_HOUR,
    SPOT_INTERRUPTIONS_PER_HOUR,
    terms_of,
)
from scalecost.engine.training.model.goodput import combined_rate

H100 = "nvidia-h100-sxm-80gb"
RUN = {
    "model": {"preset": "llama-2-7b"},
    "training": {"tokens": 2e10, "sequence_length": 4096, "global_batch_size": 512},
}
LAYOUT = {"accelerator": H100, "count": 64, "parallelism": {"data": 64, "tensor": 1, "pipeline": 1}}


def _with_spot(catalog, usd: float, rate: float | None):
    """The catalog with an AWS spot row of the p5.48xlarge (8 H100) beside its on-demand rows."""
    (on_demand,) = [p for p in catalog.prices[H100] if p.provider == "aws" and p.as_of == "2025-H2"]
    spot = replace(on_demand, pricing_model="spot", usd_per_hour=usd, interruptions_per_hour=rate)
    return replace(catalog, prices={**catalog.prices, H100: (*catalog.prices[H100], spot)}), on_demand


def _estimate(catalog, pricing_model: str):
    body = {**RUN, "hardware": LAYOUT, "cost": {"provider": "aws", "pricing_model": pricing_model}}
    return estimate_training(body, catalog)


def test_a_spot_row_without_a_rate_gets_its_providers_published_rate(catalog):
    with_spot, on_demand = _with_spot(catalog, 2.5, None)
    spot = [p for p in with_spot.prices[H100] if p.pricing_model == "spot"][0]
    assert terms_of(spot).interruptions_per_hour == SPOT_INTERRUPTIONS_PER_HOUR["aws"]
    assert terms_of(on_demand).interruptions_per_hour == 0.0  # on-demand capacity is not reclaimed
    unknown = replace(spot, provider="somecloud")
    assert terms_of(unknown).interruptions_per_hour == DEFAULT_SPOT_INTERRUPTIONS_PER_HOUR


def test_a_spot_run_takes_longer_and_costs_more_than_its_price_times_the_on_demand_time(catalog):
    with_spot, on_demand = _with_spot(catalog, 2.5, 0.05)  # an instance reclaimed every 20 h
    base = _estimate(with_spot, "on-demand")
    spot = _estimate(with_spot, "spot")
    assert spot["time"]["seconds"] > base["time"]["seconds"]
    assert spot["time"]["evictions"] > 1.0 and base["time"]["evictions"] == 0.0
    assert spot["time"]["interruptions"] > base["time"]["interruptions"] + spot["time"]["evictions"] * 0.99
    assert spot["time"]["breakdown"]["interruptions_s"] > base["time"]["breakdown"]["interruptions_s"]
    assert spot["time"]["interruptions_per_hour"] > base["time"]["interruptions_per_hour"]
    assert spot["cost"]["interruptions_per_instance_hour"] == 0.05
    at_spot_price = base["cost"]["total_usd"] * 2.5 / on_demand.usd_per_hour
    assert spot["cost"]["total_usd"] > at_spot_price


def test_a_spot_rate_of_zero_reproduces_the_on_demand_run_exactly(catalog):
    with_spot, on_demand = _with_spot(catalog, 2.5, 0.0)
    base = _estimate(with_spot, "on-demand")
    spot = _estimate(with_spot, "spot")
    assert spot["time"]["seconds"] == base["time"]["seconds"]
    assert spot["time"]["evictions"] == 0.0
    assert spot["cost"]["billed_seconds"] == base["cost"]["billed_seconds"]
    assert spot["cost"]["total_usd"] == pytest.approx(
        base["cost"]["total_usd"] * 2.5 / on_demand.usd_per_hour
    )


def test_evictions_shorten_the_young_daly_checkpoint_interval(catalog):
    with_spot, _ = _with_spot(catalog, 2.5, 0.05)
    base = _estimate(with_spot, "on-demand")["assumptions"]["goodput"]
    spot = _estimate(with_spot, "spot")["assumptions"]["goodput"]
    assert spot["checkpoint_interval_steps"] < base["checkpoint_interval_steps"]


def test_two_interruption_processes_add_their_rates_and_weight_their_restarts():
    rate, restart = combined_rate(1e-5, 900.0, 3e-5, 300.0)
    assert rate == pytest.approx(4e-5)
    assert restart == pytest.approx((1e-5 * 900 + 3e-5 * 300) / 4e-5)
    assert combined_rate(1e-5, 900.0, 0.0, 300.0) == (1e-5, 900.0)


def test_the_planner_prices_spot_offers_with_their_evictions_as_the_estimate_does(catalog):
    with_spot, _ = _with_spot(catalog, 2.5, 0.05)
    body = {
        **RUN,
        "search": {"accelerators": [H100], "providers": ["aws"], "pricing_models": ["spot", "on-demand"]},
        "objective": "pareto",
        "results": 20,
    }
    answer = plan_training(body, with_spot)
    spot = [p for p in answer["results"] + answer["frontier"] if p["pricing_model"] == "spot"]
    assert spot, "a spot plan at 36 % of the on-demand price is on the frontier"
    for plan in spot:
        assert plan["interruptions"]["evictions"] > 0.0
        assert plan["interruptions"]["per_instance_hour"] == 0.05
    best = answer["best"]
    assert best["seconds"] == pytest.approx(best["estimate"]["time"]["seconds"], rel=1e-9)
    assert best["total_usd"] == pytest.approx(best["estimate"]["cost"]["total_usd"], rel=1e-9)
    assert best["interruptions"]["expected"] == pytest.approx(
        best["estimate"]["time"]["interruptions"], rel=1e-9
    )


SERVE = {
    "model": {"preset": "llama-3-8b"},
    "workload": {"requests_per_second": 400, "prompt_tokens": 512, "output_tokens": 128},
    "slo": {"time_to_first_token_s": 1.0, "time_per_output_token_s": 0.05},
    "search": {
        "accelerators": [H100],
        "providers": ["aws"],
        "engines": ["vllm"],
        "devices_per_replica": [1],
        "formats": [{"precision": "bf16"}],
        "max_batch_size": 32,
    },
}


def _aws_only(catalog, pricing_model: str, rate: float | None):
    """The H100's AWS p5.48xlarge as its only row, on-demand or spot (a provider listing only spot is priced on
    spot: pricing._pick) at the same price, so that only the evictions differ."""
    (row,) = [p for p in catalog.prices[H100] if p.provider == "aws" and p.as_of == "2025-H2"]
    row = replace(row, pricing_model=pricing_model, interruptions_per_hour=rate)
    return replace(catalog, prices={**catalog.prices, H100: (row,)})


def test_a_serving_fleet_on_spot_adds_the_replicas_its_evictions_take_down(catalog):
    from scalecost.engine import plan_serving

    on_demand = plan_serving(SERVE, _aws_only(catalog, "on-demand", None))["plan"]
    answer = plan_serving(SERVE, _aws_only(catalog, "spot", 1.0))  # an eviction an hour, 600 s start-up
    spot, utilization = answer["plan"], answer["slo"]["max_utilization"]
    assert (
        on_demand["evictions"]["extra_replicas"] == 0 and on_demand["evictions"]["replica_down_share"] == 0.0
    )
    down = spot["evictions"]["replica_down_share"]
    assert down == pytest.approx(1.0 * 600 / 3600)  # one instance per replica: λ·R
    assert spot["evictions"]["extra_replicas"] >= 1
    # the capacity that stays up still serves the demand at max_utilization
    up_rps = spot["replicas"] * spot["throughput"]["requests_per_second_per_replica"] * (1 - down)
    assert up_rps * utilization >= SERVE["workload"]["requests_per_second"] * (1 - 1e-9)
    assert spot["cost"]["usd_per_hour"] > on_demand["cost"]["usd_per_hour"]
    at_zero = plan_serving(SERVE, _aws_only(catalog, "spot", 0.0))["plan"]
    assert at_zero["replicas"] == on_demand["replicas"]


def test_a_serving_plan_searches_spot_when_asked_and_its_estimate_request_prices_spot(catalog):
    from scalecost.engine import estimate_inference, plan_serving

    with_spot, _ = _with_spot(catalog, 2.5, 1.0)  # AWS p5 on spot at $2.50/GPU-h, an eviction an hour
    body = {**SERVE, "search": {**SERVE["search"], "pricing_models": ["spot"]}}
    plan = plan_serving(body, with_spot)["plan"]
    assert plan["pricing_model"] == "spot" and plan["evictions"]["per_instance_hour"] == 1.0
    assert plan["estimate_request"]["cost"]["pricing_model"] == "spot"
    estimate = estimate_inference(plan["estimate_request"], with_spot)
    assert estimate["cost"]["price_source"]["pricing_model"] == "spot"
    default = plan_serving(SERVE, with_spot)["plan"]  # no pricing_models: each provider's on-demand price
    assert (
        default["pricing_model"] == "on-demand" and "pricing_model" not in default["estimate_request"]["cost"]
    )
    with pytest.raises(InvalidRequest) as err:
        plan_serving({**SERVE, "search": {**SERVE["search"], "pricing_models": ["preemptible"]}}, with_spot)
    assert "search.pricing_models.0" in err.value.errors
