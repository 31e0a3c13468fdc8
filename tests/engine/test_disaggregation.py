"""Disaggregated prefill/decode (issue 30 §3): separate pools in the estimate and the serving planner."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scalecost.engine.errors import InvalidRequest
from scalecost.engine.inference.estimate import estimate_inference
from scalecost.engine.inference.model.engine_step import step_parts, step_seconds
from scalecost.engine.inference.model.memory import kv_bytes_per_token
from scalecost.engine.inference.model.prefill_wait import MAX_PREFILL_LOAD
from scalecost.engine.inference.model.schedule import DEFAULT_FRONT_END_LATENCY_S as REQUEST_OVERHEAD_S
from scalecost.engine.inference.planner import plan_serving
from scalecost.engine.inference.request import parse_request
from scalecost.engine.inference.search.disaggregated import best_disaggregated
from scalecost.engine.inference.search.rank import search as rank_search
from scalecost.engine.inference.search.request import parse_plan_request

from .disaggregation_calibration import load, medians, report, request, table
from .reference_catalog import load_catalog

CATALOG = load_catalog()
H100 = "nvidia-h100-sxm-80gb"
LONG = {  # Llama 3.1 70B FP8 on H100 (vLLM), 8k-token prompts
    "model": {"preset": "llama-3.1-70b"},
    "weights": {"precision": "fp8"},
    "engine": "vllm",
    "prompt_tokens": 8000,
    "output_tokens": 500,
    "hardware": {"accelerator": H100, "count": 4},
    "output": {"suggestions": False, "recommendations": False},
}


def pools(prefill: int, decode: int, tp_p: int = 4, tp_d: int = 4, **extra: Any) -> dict[str, Any]:
    return {
        "disaggregation": {
            "prefill": {"tensor_parallel": tp_p, "replicas": prefill},
            "decode": {"tensor_parallel": tp_d, "replicas": decode},
            **extra,
        }
    }


def estimate(**request: Any) -> dict[str, Any]:
    return estimate_inference({**LONG, **request}, CATALOG)


def errors_of(**request: Any) -> dict[str, list[str]]:
    with pytest.raises(InvalidRequest) as exc:
        estimate(**request)
    return exc.value.errors


def test_ttft_at_a_light_load_is_front_end_plus_one_prefill_plus_the_kv_transfer() -> None:
    r = estimate(serving=pools(2, 1), workload={"requests_per_second": 0.01})
    d = r["load"]["disaggregation"]
    p = step_parts(parse_request({**LONG}, CATALOG).workload, CATALOG.accelerators[H100], 4)
    one_prefill = float(step_seconds(p, np.array(0.0), np.array(8000.0)))  # 8000 tokens fit the 8192 budget
    assert d["prefill"]["prefill_s"] == pytest.approx(one_prefill, rel=1e-9)
    assert d["prefill"]["queue_wait_s"] < 1e-3 * one_prefill
    expected = REQUEST_OVERHEAD_S + one_prefill + d["kv_transfer"]["seconds"]
    assert r["latency"]["time_to_first_token_s"] == pytest.approx(expected, rel=1e-3)


def test_the_kv_transfer_moves_each_decode_ranks_shard_over_the_network_or_the_fabric() -> None:
    w = parse_request({**LONG}, CATALOG).workload
    apart = estimate(serving=pools(2, 1), workload={"requests_per_second": 1.0})["load"]["disaggregation"]
    assert apart["kv_transfer"]["bytes_per_request_per_decode_rank"] == 8000 * kv_bytes_per_token(w, 4)
    assert apart["kv_transfer"]["link"] == "scale-out"  # 12 devices: more than one 8-GPU node
    near = estimate(serving=pools(1, 1), workload={"requests_per_second": 1.0})["load"]["disaggregation"]
    assert near["kv_transfer"]["link"] == "scale-up"  # 8 devices: one NVLink domain
    assert near["kv_transfer"]["seconds"] < apart["kv_transfer"]["seconds"] / 3
    streamed = estimate(
        serving=pools(2, 1, layerwise_kv_transfer=True), workload={"requests_per_second": 1.0}
    )
    assert streamed["load"]["disaggregation"]["kv_transfer"]["seconds"] < apart["kv_transfer"]["seconds"]


def test_decode_only_steps_keep_tpot_below_the_co_located_tpot_with_long_prompts() -> None:
    """The point of disaggregation (DistServe §2): no prefill chunk slows a decode step."""
    rate = {"requests_per_second": 1.0}
    split = estimate(serving=pools(1, 1), workload=rate)
    colocated = estimate(workload=rate)  # one 4-GPU replica prefilling and decoding
    decode = split["load"]["disaggregation"]["decode"]
    assert split["latency"]["time_per_output_token_s"] == pytest.approx(decode["step_s"], rel=1e-12)
    tpot = split["latency"]["percentiles"]["time_per_output_token_s"]
    assert tpot["p50"] == tpot["p99"]  # no prefill chunks: no spread
    p90 = colocated["latency"]["percentiles"]["time_per_output_token_s"]["p90"]
    assert split["latency"]["time_per_output_token_s"] < 0.5 * p90


def test_throughput_is_limited_by_the_slower_pool_and_a_rate_past_it_is_saturated() -> None:
    one = estimate(serving=pools(1, 4), workload={"requests_per_second": 0.5})
    load = one["load"]
    assert load["disaggregation"]["bottleneck"] == "prefill"
    assert load["sustainable_requests_per_second"] == pytest.approx(  # the M/D/1 queue's cap, as co-located
        MAX_PREFILL_LOAD * load["disaggregation"]["prefill"]["capacity_requests_per_second"], rel=1e-12
    )
    near = estimate(
        serving=pools(1, 4), workload={"requests_per_second": 0.95 * load["sustainable_requests_per_second"]}
    )
    assert near["load"]["saturated"] is False and near["latency"]["percentiles"] is not None
    more = estimate(serving=pools(3, 4), workload={"requests_per_second": 0.5})
    assert more["load"]["sustainable_requests_per_second"] == pytest.approx(
        3 * load["sustainable_requests_per_second"], rel=1e-9
    )
    p90 = [r["latency"]["percentiles"]["time_to_first_token_s"]["p90"] for r in (more, one)]
    assert p90[0] < p90[1]  # a shorter prompt queue
    past = estimate(
        serving=pools(1, 4), workload={"requests_per_second": 2 * load["sustainable_requests_per_second"]}
    )
    assert past["load"]["saturated"] is True and past["latency"]["percentiles"] is None


def test_a_concurrency_is_the_whole_deployments_and_littles_law_holds() -> None:
    r = estimate(serving=pools(2, 2), batch_size=64)
    x, e2e = r["throughput"]["requests_per_second"], r["latency"]["end_to_end_s"]
    assert x * e2e == pytest.approx(64, rel=1e-9)
    decoding = x * 499 * r["latency"]["time_per_output_token_s"]  # Little's law on the decode pool alone
    assert 2 * r["load"]["disaggregation"]["decode"]["batch_per_replica"] == pytest.approx(decoding, rel=0.02)
    assert decoding < 64  # the rest wait for, or are in, the prefill pool


def test_cost_is_both_pools_and_input_tokens_pay_the_prefill_pool() -> None:
    r = estimate(
        serving=pools(3, 1), workload={"requests_per_second": 1.0}, cost={"usd_per_accelerator_hour": 2.0}
    )
    assert r["cost"]["usd_per_hour"] == pytest.approx(16 * 2.0)
    assert r["cost"]["usd_per_million_input_tokens"] == pytest.approx(12 * 2.0 / 3600 / (1.0 * 8000) * 1e6)


def test_pools_on_different_accelerators_are_priced_each_at_its_own_rate() -> None:
    split = {
        "disaggregation": {
            "prefill": {"accelerator": "nvidia-b200", "tensor_parallel": 4, "replicas": 1},
            "decode": {"tensor_parallel": 4, "replicas": 1},
        }
    }
    prices = {H100: 2.0, "nvidia-b200": 5.0}
    r = estimate(serving=split, workload={"requests_per_second": 1.0}, prices=prices)
    assert r["cost"]["usd_per_hour"] == pytest.approx(4 * 5.0 + 4 * 2.0)
    assert r["load"]["disaggregation"]["prefill"]["accelerator"] == "nvidia-b200"
    assert r["load"]["disaggregation"]["kv_transfer"]["link"] == "scale-out"


def test_bad_pools_are_refused_naming_the_field() -> None:
    bad = {
        "disaggregation": {
            "prefill": {"tensor_parallel": 3, "replicas": 1},
            "decode": {"accelerator": "no-such-gpu", "tensor_parallel": 4, "replicas": 0},
        }
    }
    errors = errors_of(serving=bad)
    assert "serving.disaggregation.decode.accelerator" in errors
    assert "serving.disaggregation.decode.replicas" in errors
    assert any(
        "valid degrees" in m
        for m in errors_of(serving=pools(1, 1, tp_p=3))["serving.disaggregation.prefill.tensor_parallel"]
    )
    static = errors_of(serving={"scheduler": "static", **pools(1, 1)})
    assert "continuous scheduler" in static["serving.disaggregation"][0]
    small = errors_of(serving=pools(1, 1, tp_p=1))  # 70B FP8 weights alone exceed one 80 GB device
    assert "do not fit" in small["serving.disaggregation.prefill.tensor_parallel"][0]


PLAN = {
    "model": {"preset": "llama-3.1-70b"},
    "search": {"accelerators": [H100], "engines": ["vllm"], "disaggregation": True},
}


def plan(prompt: int, output: int, ttft: float, tpot: float, rps: float) -> dict[str, Any]:
    workload = {"requests_per_second": rps, "prompt_tokens": prompt, "output_tokens": output}
    slo = {"time_to_first_token_s": ttft, "time_per_output_token_s": tpot}
    return plan_serving({**PLAN, "workload": workload, "slo": slo}, CATALOG)


def test_the_planner_picks_separate_pools_for_long_prompts_under_a_tight_tpot() -> None:
    r = plan(8000, 300, 1.5, 0.02, 20.0)
    section = r["disaggregated_serving"]
    assert r["disaggregated"] is True and section["wins"] is True
    pools_plan = section["plan"]
    assert pools_plan["cost"]["usd_per_hour"] < r["plan"]["cost"]["usd_per_hour"]
    # the estimate body reproduces the pools and meets the objectives at the demand
    body = pools_plan["estimate_request"]
    again = estimate_inference(body, CATALOG)
    assert again["devices_needed"]["targets_met"] is True
    assert again["cost"]["usd_per_hour"] == pytest.approx(pools_plan["cost"]["usd_per_hour"])
    p90 = again["latency"]["percentiles"]["time_to_first_token_s"]["p90"]
    assert p90 == pytest.approx(pools_plan["latency"]["time_to_first_token_s"], rel=1e-9)


def test_the_planner_keeps_co_located_replicas_for_short_prompts() -> None:
    r = plan(200, 500, 1.0, 0.05, 10.0)
    assert r["disaggregated"] is False and r["disaggregated_serving"]["wins"] is False
    assert r["disaggregated_serving"]["plan"]["cost"]["usd_per_hour"] > r["plan"]["cost"]["usd_per_hour"]


def test_the_planner_does_not_search_pools_unless_asked() -> None:
    workload = {"requests_per_second": 20.0, "prompt_tokens": 8000, "output_tokens": 300}
    slo = {"time_to_first_token_s": 1.5, "time_per_output_token_s": 0.02}
    search = {**PLAN["search"], "disaggregation": False}
    r = plan_serving({**PLAN, "search": search, "workload": workload, "slo": slo}, CATALOG)
    assert r["disaggregated"] is False
    assert r["disaggregated_serving"] == {
        "offered": False,
        "wins": None,
        "reason": r["disaggregated_serving"]["reason"],
        "plan": None,
    }


def test_public_disaggregated_points_errors_per_point() -> None:
    """Mooncake's SGLang 1P1D points (Qwen3-235B BF16, TP8 per pool on H20, RoCE), printed per point
    (`python -m tests.engine.disaggregation_calibration`). TTFT 1k-32k tokens is within -15/+24 %; under 1k tokens the
    measured TTFT keeps ~0.12 s the model does not have (the router and the transfer's handshake, not modelled). The
    transfer is modelled at one 400 Gb/s NIC per GPU; the measured node had half of that (4 ports per 8 GPUs)."""
    rows = table(CATALOG)
    print(report(rows))
    found = medians(rows)
    assert found["ttft"][1] == 9 and found["ttft"][0] <= 0.20
    assert found["kv_transfer"][0] <= 0.70


def test_the_kv_moved_per_request_is_the_published_size() -> None:
    """Mooncake's table: 32,768 tokens of Qwen3-235B BF16 KV at TP8 move 12.62 GB (4 KV heads on 8 ranks: each
    head held twice, so twice the unique 2·L·g·d·2 bytes)."""
    body = request(next(r for r in load() if r["prompt_tokens"] == "32768"))
    answer = estimate_inference(body, CATALOG)
    per_rank = answer["load"]["disaggregation"]["kv_transfer"]["bytes_per_request_per_decode_rank"]
    assert 8 * per_rank == pytest.approx(12.62e9, rel=0.005)


def test_a_light_load_on_a_small_prefill_pool_and_a_large_decode_pool_is_not_saturated() -> None:
    """The grid starts where both pools are idle, however many decode replicas there are (it once started at a fixed
    share of the largest batch, where 64 decode replicas already outran one prefill replica)."""
    for given in ({"workload": {"requests_per_second": 0.05}}, {"batch_size": 1}):
        r = estimate(serving=pools(1, 64), **given)
        assert r["load"]["saturated"] is False
        prefill = r["load"]["disaggregation"]["prefill"]
        rate = r["throughput"]["requests_per_second"]
        # the decode batch is read off a geometric grid by interpolation in log: the rate it implies and the
        # answer's rate agree to the grid's interpolation error (about 1e-6 over a grid spanning four decades)
        assert prefill["utilization"] == pytest.approx(
            rate / prefill["capacity_requests_per_second"], rel=1e-5
        )
        assert prefill["utilization"] < 0.25
        one_prefill = r["load"]["disaggregation"]["prefill"]["prefill_s"]
        assert r["latency"]["time_to_first_token_s"] < 1.1 * (REQUEST_OVERHEAD_S + one_prefill) + 0.05


def test_no_output_beyond_the_first_token_leaves_the_decode_pool_idle() -> None:
    r = estimate(serving=pools(1, 1), output_tokens=1, batch_size=1)
    assert r["load"]["saturated"] is False
    assert r["throughput"]["requests_per_second"] == pytest.approx(1.0 / r["latency"]["end_to_end_s"])


def test_the_pools_search_stops_when_the_time_budget_is_spent() -> None:
    """Checked between families: a spent budget keeps the first family's pools only."""
    workload = {"requests_per_second": 20.0, "prompt_tokens": 8000, "output_tokens": 300}
    slo = {"time_to_first_token_s": 1.5, "time_per_output_token_s": 0.02}
    search = {"accelerators": [H100, "nvidia-h200-sxm-141gb"], "engines": ["vllm"], "disaggregation": True}
    space = parse_plan_request({**PLAN, "search": search, "workload": workload, "slo": slo}, CATALOG)
    groups = rank_search(space).groups
    calls: list[int] = []

    def spent() -> bool:
        calls.append(1)
        return False

    first = best_disaggregated(space, groups, spent)
    everything = best_disaggregated(space, groups)
    assert len(calls) == 1
    assert first is not None and everything is not None
    assert first.group.accelerator.id == groups[0].accelerator.id
    assert everything.usd_per_hour <= first.usd_per_hour


def test_every_pool_of_a_plan_holds_one_request() -> None:
    """Llama-3-70B FP8 does not fit one 80 GB H100 PCIe with a request's KV: neither pool may use one device (the
    prefill degrees once went unchecked, and the estimate body of such pools was refused)."""
    workload = {"requests_per_second": 50.0, "prompt_tokens": 512, "output_tokens": 256}
    slo = {"time_to_first_token_s": 1.0, "time_per_output_token_s": 0.04}
    search = {"accelerators": ["nvidia-h100-pcie-80gb"], "engines": ["vllm"], "disaggregation": True}
    body = {**PLAN, "weights": {"precision": "fp8"}, "search": search, "workload": workload, "slo": slo}
    pools_plan = plan_serving(body, CATALOG)["disaggregated_serving"]["plan"]
    assert pools_plan["prefill"]["tensor_parallel"] >= 2 and pools_plan["decode"]["tensor_parallel"] >= 2
    again = estimate_inference(pools_plan["estimate_request"], CATALOG)
    assert again["devices_needed"]["targets_met"] is True


@pytest.mark.parametrize(
    "model, prompt, tpot, rps",
    [
        ("llama-3-8b", 4000, 0.03, 40.0),
        ("llama-3-70b", 512, 0.08, 5.0),
        (
            "mixtral-8x7b",
            512,
            0.03,
            40.0,
        ),  # its pools once read as saturated at the demand (grid-step saturation)
        ("mixtral-8x7b", 4000, 0.08, 5.0),
    ],
)
def test_the_pools_estimate_body_reproduces_their_cost_and_meets_the_objectives(
    model, prompt, tpot, rps
) -> None:
    accelerators = ["nvidia-l4", "nvidia-a100-sxm-80gb", "nvidia-h100-sxm-80gb", "amd-mi300x", "nvidia-b200"]
    body = {
        "model": {"preset": model},
        "workload": {"requests_per_second": rps, "prompt_tokens": prompt, "output_tokens": 200},
        "slo": {"time_to_first_token_s": 2.0, "time_per_output_token_s": tpot},
        "search": {"accelerators": accelerators, "disaggregation": True, "max_batch_size": 256},
    }
    pools_plan = plan_serving(body, CATALOG)["disaggregated_serving"]["plan"]
    assert pools_plan is not None
    again = estimate_inference(pools_plan["estimate_request"], CATALOG)
    assert again["devices_needed"]["targets_met"] is True and again["load"]["saturated"] is False
    assert again["cost"]["usd_per_hour"] == pytest.approx(pools_plan["cost"]["usd_per_hour"], rel=1e-9)
