"""Plans you can buy (issue 29): offers sell whole instances, within their limit and the caller's quota, in valid
slice sizes, billed from start-up in increments; one rule picks the price; a plan can be priced by the caller."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import numpy as np
import pytest
from scalecost.engine import Catalog, InvalidRequest, Price, estimate_training, plan_training
from scalecost.engine.offers import Terms, billed_seconds, buyable, terms_of

SMALL = {
    "model": {"preset": "llama-2-7b"},
    "training": {"tokens": 1e9, "sequence_length": 4096, "global_batch_size": 256},
}


def test_billing_rounds_start_up_plus_run_up_to_the_increment_and_the_minimum():
    per_minute = Terms(billing_increment_s=60, minimum_billed_s=60, startup_s=300)
    assert billed_seconds(1.0, per_minute) == 360.0  # 301 s → six whole minutes
    assert billed_seconds(60.0, per_minute) == 360.0  # 360 s exactly
    per_second = Terms(billing_increment_s=1, minimum_billed_s=60, startup_s=0)
    assert billed_seconds(10.2, per_second) == 60.0  # the minimum
    assert list(billed_seconds(np.array([59.5, 61.2]), per_second)) == [60.0, 62.0]


def test_an_offer_sells_whole_instances_within_its_limit_and_the_callers_quota():
    eight = Terms(accelerators_per_instance=8, max_accelerators=64)
    counts = np.array([1, 4, 8, 12, 16, 64, 72])
    assert list(counts[buyable(counts, eight)]) == [8, 16, 64]
    assert list(counts[buyable(counts, eight, quota=16)]) == [8, 16]
    assert not buyable(counts, eight, quota=0).any()  # a quota of 0: none there


def test_a_tpu_v6e_is_sold_in_slices_never_288_chips(catalog):
    *_, row = [p for p in catalog.prices["google-tpu-v6e"] if p.pricing_model == "on-demand"]  # oldest first
    terms = terms_of(row, "google-tpu-v6e")  # slice sizes of cloud.google.com/tpu/docs/v6e
    counts = np.array([1, 2, 4, 8, 256, 288, 512])
    assert list(counts[buyable(counts, terms)]) == [
        1,
        4,
        8,
        256,
        512,
    ]  # 512: two 256-chip slices (Multislice)


def test_every_plan_is_a_whole_number_of_instances_within_the_quota(catalog):
    body = {
        **SMALL,
        "search": {"accelerators": ["nvidia-h100-sxm-80gb"]},
        "constraints": {"max_accelerators_per_provider": {"runpod": 0, "aws": 64}},
        "objective": "fastest",
        "results": 20,
    }
    answer = plan_training(body, catalog)
    assert answer["results"] and answer["excluded"]["not_sold"] > 0
    for plan in answer["results"] + answer["frontier"]:
        assert plan["provider"] != "runpod"  # quota 0
        assert plan["count"] % plan["accelerators_per_instance"] == 0
        assert plan["instances"] * plan["accelerators_per_instance"] == plan["count"]
        assert plan["provider"] != "aws" or plan["count"] <= 64
        assert plan["billed_seconds"] >= plan["seconds"] + plan["startup_seconds"]


def test_a_plans_estimate_request_reproduces_its_billed_cost(catalog):
    body = {**SMALL, "search": {"accelerators": ["nvidia-h100-sxm-80gb"]}, "objective": "cheapest"}
    best = plan_training(body, catalog)["best"]
    cost = best["estimate"]["cost"]
    assert cost["instances"] == best["instances"] and cost["instance_type"] == best["instance_type"]
    assert cost["billed_seconds"] == pytest.approx(best["billed_seconds"])
    assert cost["total_usd"] == pytest.approx(best["total_usd"], rel=1e-9)


def test_an_estimate_pays_for_whole_instances(catalog):
    body = {**SMALL, "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 4}}
    body["cost"] = {"provider": "aws"}  # p5.48xlarge: 8 GPUs
    cost = estimate_training(body, catalog)["cost"]
    assert cost["instances"] == 1
    assert cost["billed_accelerator_hours"] == pytest.approx(8 * cost["billed_seconds"] / 3600)
    assert cost["billed_seconds"] >= 600  # AWS start-up default, docs/formulas.md "Offers"


def _catalog_with(catalog: Catalog, acc_id: str, rows: list[Price], today: dt.date | None = None) -> Catalog:
    return replace(catalog, prices={**catalog.prices, acc_id: tuple(rows)}, today=today, stale_after_days=90)


def test_a_gpu_only_sku_never_undercuts_an_instance_price(catalog):
    vm = Price("gcp", 11.0, "a3-highgpu-8g", "us-east4", accelerators_per_instance=8)
    gpu_only = Price("gcp", 9.8, "H100", "us-east4", covers="accelerator")
    cat = _catalog_with(catalog, "nvidia-h100-sxm-80gb", [vm, gpu_only])
    body = {**SMALL, "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 8}}
    assert estimate_training(body, cat)["cost"]["usd_per_accelerator_hour"] == 11.0
    body["cost"] = {"covers": "accelerator"}  # used only when asked
    assert estimate_training(body, cat)["cost"]["usd_per_accelerator_hour"] == 9.8


def test_the_newest_row_of_an_offer_wins_over_an_older_regional_row(catalog):
    old = Price("aws", 2.0, "p5.48xlarge", "us-east-1", effective_from=dt.date(2024, 1, 1))
    new = Price("aws", 2.8, "p5.48xlarge", None, effective_from=dt.date(2026, 1, 1))
    cat = _catalog_with(catalog, "nvidia-h100-sxm-80gb", [old, new], today=dt.date(2026, 2, 1))
    body = {**SMALL, "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 8}}
    cost = estimate_training(body, cat)["cost"]
    assert cost["usd_per_accelerator_hour"] == 2.8 and cost["price_source"]["stale"] is False
    body["cost"] = {"region": "us-east-1"}  # the caller's region: that row, stale
    cost = estimate_training(body, cat)["cost"]
    assert cost["usd_per_accelerator_hour"] == 2.0 and cost["price_source"]["stale"] is True
    body["cost"] = {"region": "eu-west-1"}
    with pytest.raises(InvalidRequest) as err:
        estimate_training(body, cat)
    assert "cost.region" in err.value.errors


def test_plans_mark_stale_prices_and_can_leave_them_out(catalog):
    old = Price("aws", 2.0, "p5.48xlarge", "us-east-1", effective_from=dt.date(2024, 1, 1),
                accelerators_per_instance=8)  # fmt: skip
    cat = _catalog_with(catalog, "nvidia-h100-sxm-80gb", [old], today=dt.date(2026, 2, 1))
    body = {**SMALL, "search": {"accelerators": ["nvidia-h100-sxm-80gb"]}, "objective": "cheapest"}
    best = plan_training(body, cat)["best"]
    assert best["price_stale"] is True and best["price_source"]["age_days"] > 90
    body["constraints"] = {"max_price_age_days": 90}
    with pytest.raises(InvalidRequest) as err:  # the only offer is too old: nothing to price the part with
        plan_training(body, cat)
    assert "search.accelerators" in err.value.errors


@pytest.mark.parametrize(
    ("prices", "field"),
    [
        ({"nvidia-h999": 2.0}, "prices.nvidia-h999"),
        ({"nvidia-h800-sxm-80gb": 1e9}, "prices.nvidia-h800-sxm-80gb"),
        ({"nvidia-h800-sxm-80gb": -1.0}, "prices.nvidia-h800-sxm-80gb"),
    ],
)
def test_bad_price_overrides_are_refused_naming_the_field(catalog, prices, field):
    body = {**SMALL, "search": {"accelerators": ["nvidia-h800-sxm-80gb"]}, "prices": prices}
    with pytest.raises(InvalidRequest) as err:
        plan_training(body, catalog)
    assert field in err.value.errors


def test_deepseek_v3_on_2048_h800_at_2_usd_an_hour_is_near_its_published_cost(catalog):
    """DeepSeek-V3 README (github.com/deepseek-ai/DeepSeek-V3 @9b4e978): 2.788M H800 GPU-hours for its full
    training, $5.576M at $2/GPU-hour; 14.8T tokens, FP8; 2,048 H800 (arXiv 2412.19437 §3.1). The catalog has no
    H800 price: the request gives it."""
    body = {
        "model": {"preset": "deepseek-v3"},
        "training": {
            "tokens": 14.8e12,
            "sequence_length": 4096,
            "global_batch_size": 15360,
            "precision": "fp8",
        },
        "search": {"accelerators": ["nvidia-h800-sxm-80gb"], "device_counts": [2048]},
        "prices": {"nvidia-h800-sxm-80gb": 2.0},
        "objective": "cheapest",
    }
    best = plan_training(body, catalog)["best"]
    assert best["count"] == 2048 and best["price_source"] == "override"
    assert best["accelerator_hours"] == pytest.approx(2.788e6, rel=0.15)
    assert best["total_usd"] == pytest.approx(5.576e6, rel=0.15)


def test_min_optimizer_steps_refuses_a_batch_that_leaves_too_few_steps(catalog):
    body = {**SMALL, "search": {"accelerators": ["nvidia-h100-sxm-80gb"]}}
    body["constraints"] = {"min_optimizer_steps": 2000}  # 1e9 / (256 × 4096) = 953 steps
    with pytest.raises(InvalidRequest) as err:
        plan_training(body, catalog)
    (message,) = err.value.errors["constraints.min_optimizer_steps"]
    assert "954 optimizer steps" in message and "at most 122" in message  # 1e9 / (2000 × 4096) = 122
    body["constraints"] = {"min_optimizer_steps": 900}
    assert plan_training(body, catalog)["constraints"]["min_optimizer_steps"] == 900


def test_a_batch_far_above_the_compute_optimal_batch_is_warned_about(catalog):
    # 7B on 1B tokens: C = 6 · 6.7e9 · 1e9 ≈ 4e19 FLOPs, B_opt ≈ 0.292 · C^0.3271 ≈ 0.75M tokens (DeepSeek LLM §3.1)
    body = {**SMALL, "search": {"accelerators": ["nvidia-h100-sxm-80gb"]}}
    assert not any("compute-optimal" in n for n in plan_training(body, catalog)["notes"])  # 1M tokens: 1.4 ×
    body["training"] = {**SMALL["training"], "global_batch_size": 2048}  # 8.4M tokens: 11 ×
    assert any("compute-optimal" in n for n in plan_training(body, catalog)["notes"])


def test_a_plan_that_starts_up_for_longer_than_it_runs_is_flagged(catalog):
    # 2e7 tokens: minutes on one instance (always allowed: nothing smaller is sold), less than its start-up
    tiny = {**SMALL, "training": {**SMALL["training"], "tokens": 2e7}}
    body = {**tiny, "search": {"accelerators": ["nvidia-h100-sxm-80gb"]}, "objective": "fastest"}
    answer = plan_training(body, catalog)
    best = answer["best"]
    assert best["startup_exceeds_run"] == (best["startup_seconds"] > best["seconds"])
    assert best["startup_exceeds_run"] and any("starts up for longer" in n for n in answer["notes"])


def test_llama_3_1_405b_on_16384_h100_within_90_days_is_near_metas_gpu_hours(catalog):
    """Llama 3.1 model card (meta-llama/llama-models @a9c89c4, MODEL_CARD.md): 30.84M H100 GPU-hours for 405B on
    ~15T tokens; 16,384 GPUs, 8K sequences, 16M tokens per step (tests/engine/data/public_training_runs.csv)."""
    body = {
        "model": {"preset": "llama-3.1-405b"},
        "training": {"tokens": 15e12, "sequence_length": 8192, "global_batch_size": 2048},
        "search": {"accelerators": ["nvidia-h100-sxm-80gb"], "device_counts": [16384], "max_devices": 16384},
        "constraints": {"deadline": "P90D"},
        "objective": "cheapest",
    }
    best = plan_training(body, catalog)["best"]
    assert best["count"] == 16384 and best["seconds"] <= 90 * 86400
    assert best["count"] % best["accelerators_per_instance"] == 0
    assert best["accelerator_hours"] == pytest.approx(30.84e6, rel=0.15)


FINE_TUNE_500 = {
    "model": {"preset": "llama-2-7b"},
    "training": {"tokens": 1e9, "sequence_length": 4096, "global_batch_size": 256},
    "constraints": {"budget_usd": 500},
    "objective": "fastest",
    "results": 10,
}


def test_the_7b_1b_token_500_usd_fine_tune_answers_a_handful_of_gpus_for_hours(catalog):
    """Issue 29 §6: "fastest within $500" for a 7B model on 1B tokens proposed 512 B200 for 4 minutes, then 1,024
    H200 pods for 2.3 minutes; with no scale-out network at single-node providers (offers.SCALE_OUT) and a start-up
    of at most 10 % of a multi-instance plan's billed time (offers.DEFAULT_MAX_STARTUP_SHARE), it answers one node
    for more than an hour."""
    answer = plan_training(FINE_TUNE_500, catalog)
    assert answer["results"] and answer["excluded"]["startup_dominates"] > 0
    for plan in answer["results"]:
        assert plan["count"] <= 16, plan["count"]  # a handful of GPUs (one or two nodes)
        assert plan["seconds"] >= 3600.0, plan["time"]  # for hours
        assert plan["total_usd"] <= 500.0
        assert (
            plan["startup_seconds"] <= 0.1 * (plan["startup_seconds"] + plan["seconds"])
            or plan["instances"] == 1
        )
    # without the start-up rule the same search spreads over hundreds of accelerators for minutes
    body = {**FINE_TUNE_500, "constraints": {"budget_usd": 500, "max_startup_share": 1.0}}
    spread = plan_training(body, catalog)["best"]
    assert spread["count"] >= 128 and spread["seconds"] < 900.0


def test_no_plan_spans_more_than_a_node_where_no_scale_out_network_is_sold(catalog):
    body = {
        **SMALL,
        "search": {"accelerators": ["nvidia-h100-sxm-80gb", "nvidia-h200-sxm-141gb"]},
        "constraints": {"max_startup_share": 1.0},
        "objective": "pareto",
        "results": 50,
    }
    answer = plan_training(body, catalog)
    providers = {p["provider"] for p in answer["results"] + answer["frontier"]}
    assert providers & {"runpod", "lambda"}, providers
    for plan in answer["results"] + answer["frontier"]:
        if plan["provider"] in ("runpod", "lambda"):  # single-node pods and instances (offers.SCALE_OUT)
            assert plan["count"] <= 8 and plan["price_source"]["scale_out"] is False
    assert any(p["count"] > 8 for p in answer["frontier"] if p["provider"] in ("aws", "gcp", "azure"))


def test_a_row_that_states_a_scale_out_network_lifts_the_single_node_limit(catalog):
    rows = [
        replace(p, scale_out=True) if p.provider == "runpod" else p
        for p in catalog.prices["nvidia-h100-sxm-80gb"]
    ]
    cat = replace(catalog, prices={**catalog.prices, "nvidia-h100-sxm-80gb": tuple(rows)})
    body = {
        **SMALL,
        "search": {
            "accelerators": ["nvidia-h100-sxm-80gb"],
            "providers": ["runpod"],
            "device_counts": [8, 64],
        },
        "constraints": {"max_startup_share": 1.0},
        "objective": "fastest",
    }
    assert plan_training(body, catalog)["best"]["count"] == 8
    assert plan_training(body, cat)["best"]["count"] == 64


@pytest.mark.parametrize("share", [0, -0.1, 1.5, "x"])
def test_a_bad_startup_share_is_refused_naming_the_field(catalog, share):
    body = {**FINE_TUNE_500, "constraints": {"max_startup_share": share}}
    with pytest.raises(InvalidRequest) as err:
        plan_training(body, catalog)
    assert "constraints.max_startup_share" in err.value.errors
