"""Continuous batching (issue 30): the queueing model against the public sweeps, its limits and its refusals."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scalecost.engine.errors import InvalidRequest
from scalecost.engine.inference.estimate import estimate_inference
from scalecost.engine.inference.model.continuous import closed_loop, load_speeds
from scalecost.engine.inference.request import parse_request

from .reference_catalog import load_catalog
from .serving_calibration import CALIBRATED_BATCHES, medians, report, table

CATALOG = load_catalog()
QUIET = {"suggestions": False, "recommendations": False}
NIM = {  # NVIDIA NIM 1.8.0 Llama-3.3-70B FP8 on 2 × H100, 5000 in / 500 out (public_serving_sweeps.csv)
    "model": {"preset": "llama-3.3-70b"},
    "weights": {"precision": "fp8"},
    "engine": "tensorrt-llm",
    "prompt_tokens": 5000,
    "output_tokens": 500,
    "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 2},
    "output": QUIET,
}


def estimate(**request: Any) -> dict[str, Any]:
    return estimate_inference({"output": QUIET, **request}, CATALOG)


def errors_of(**request: Any) -> dict[str, list[str]]:
    with pytest.raises(InvalidRequest) as exc:
        estimate(**request)
    return exc.value.errors


def test_public_sweeps_errors_per_point() -> None:
    """Printed per point and in total (`python -m tests.engine.serving_calibration [--static]`). Issue 30's goal
    (TTFT and TPOT within 20 %) is met for TPOT, not for TTFT: the bounds below hold what the model reaches now.
    They cover the issue-30 batch; later batches are printed (all rows, per batch, per source) and not bounded:
    batch sweeps-2 (dstack DeepSeek-R1 on 8 × H200 / 8 × MI300X) is far outside them, the lead decides."""
    print(report(table(CATALOG)))
    found = medians(table(CATALOG, batches=set(CALIBRATED_BATCHES)))
    assert found["ttft"][1] >= 30 and found["tpot"][1] >= 30 and found["throughput"][1] >= 15
    # 30.4 % before SGLang's prompt-only steps and overlap scheduler, 27.2 % before the KV-cache queue (test_kv_queue)
    assert found["ttft"][0] <= 0.26
    assert found["tpot"][0] <= 0.10
    assert found["throughput"][0] <= 0.10


def test_prompts_mixed_into_running_decodes_keep_ttft_near_one_prefill() -> None:
    """25 users × 5000-token prompts: NIM measured 0.69 s TTFT; a static batch would prefill all 25 prompts
    first (> 8 s)."""
    continuous = estimate(**NIM, batch_size=25)
    static = estimate(**NIM, batch_size=25, serving={"scheduler": "static"})
    assert continuous["latency"]["time_to_first_token_s"] == pytest.approx(0.6887, rel=0.35)
    assert static["latency"]["time_to_first_token_s"] > 10 * continuous["latency"]["time_to_first_token_s"]
    assert continuous["load"]["scheduler"] == "continuous" and static["load"]["scheduler"] == "static"
    assert static["latency"]["percentiles"] is None


def test_percentiles_are_ordered_and_the_scalars_are_the_p50() -> None:
    answer = estimate(**NIM, batch_size=64)
    lat = answer["latency"]
    for metric in ("time_to_first_token_s", "time_per_output_token_s"):
        pct = lat["percentiles"][metric]
        assert 0 < pct["p50"] <= pct["p90"] <= pct["p99"]
        assert lat[metric] == pct["p50"]


def test_one_request_in_flight_decodes_like_the_static_model() -> None:
    body = {**NIM, "batch_size": 1}
    continuous = estimate(**body)
    static = estimate(**body, serving={"scheduler": "static"})
    assert continuous["latency"]["time_per_output_token_s"] == pytest.approx(
        static["latency"]["time_per_output_token_s"], rel=0.02
    )


def test_a_rate_implies_its_concurrency_by_littles_law() -> None:
    answer = estimate(**NIM, workload={"requests_per_second": 0.3})
    load = answer["load"]
    assert not load["saturated"] and load["requests_per_second_offered"] == 0.3
    assert load["concurrency"] == pytest.approx(0.3 * answer["latency"]["end_to_end_s"], rel=1e-6)
    assert answer["throughput"]["output_tokens_per_second"] == pytest.approx(0.3 * 500, rel=1e-9)
    assert 0.3 < load["sustainable_requests_per_second"]


def test_a_rate_beyond_capacity_is_saturated_not_infinite() -> None:
    answer = estimate(**NIM, workload={"requests_per_second": 1000.0})
    load = answer["load"]
    assert load["saturated"] is True and 0 < load["sustainable_requests_per_second"] < 1000
    assert answer["latency"]["time_to_first_token_s"] is None and answer["latency"]["percentiles"] is None
    assert answer["throughput"]["requests_per_second"] == load["sustainable_requests_per_second"]


def test_a_latency_target_is_held_at_the_slo_percentile() -> None:
    base = estimate(**NIM, batch_size=64)
    p50 = base["latency"]["percentiles"]["time_to_first_token_s"]["p50"]
    p99 = base["latency"]["percentiles"]["time_to_first_token_s"]["p99"]
    target = {"time_to_first_token_s": (p50 + p99) / 2}
    assert estimate(**NIM, batch_size=64, targets=target, slo={"percentile": "p50"})["devices_needed"][
        "targets_met"
    ]
    assert not estimate(**NIM, batch_size=64, targets=target, slo={"percentile": "p99"})["devices_needed"][
        "targets_met"
    ]


def test_the_planner_arrays_are_the_single_estimate() -> None:
    """One model: the planner's arrays = the estimate at each batch size (both read the same curve)."""
    p = parse_request({**NIM, "batch_size": 1}, CATALOG)
    batches = np.array([1.0, 7.0, 40.0])
    other = parse_request(
        {**NIM, "model": {"preset": "llama-3.1-8b"}, "engine": "vllm", "batch_size": 1}, CATALOG
    )
    # stacked with another deployment (as the planner evaluates them): the same figures
    arrays = load_speeds(
        [(other.workload, other.accelerator, 1, batches), (p.workload, p.accelerator, 2, batches)]
    )[1]
    for i, b in enumerate(batches):
        one = estimate(**NIM, batch_size=int(b))
        pct = one["latency"]["percentiles"]
        assert arrays.time_to_first_token_s[i] == pytest.approx(pct["time_to_first_token_s"]["p90"], rel=1e-6)
        assert arrays.time_per_output_token_s[i] == pytest.approx(
            pct["time_per_output_token_s"]["p90"], rel=1e-6
        )
        assert arrays.requests_per_second[i] == pytest.approx(
            one["throughput"]["requests_per_second"], rel=1e-6
        )


def test_a_full_token_budget_queues_prompts() -> None:
    """Long prompts, short answers: past some concurrency every step is full and prompts wait for the budget."""
    body = {**NIM, "output_tokens": 20, "batch_size": 1, "serving": {"max_num_batched_tokens": 6000}}
    p = parse_request(body, CATALOG)
    ls = closed_loop(p.workload, p.accelerator, 2, np.array([4.0, 400.0]))
    assert not ls.prefill_saturated[0] and ls.prefill_saturated[1]
    assert ls.ttft["p50"][1] > 10 * ls.ttft["p50"][0]


@pytest.mark.parametrize(
    ("request_fields", "field"),
    [
        ({"serving": {"scheduler": "fifo"}}, "serving.scheduler"),
        ({"serving": {"chunked_prefill": "yes"}}, "serving.chunked_prefill"),
        ({"serving": {"max_num_batched_tokens": 8}}, "serving.max_num_batched_tokens"),
        (
            {"serving": {"chunked_prefill": False, "max_num_batched_tokens": 4096}},
            "serving.max_num_batched_tokens",
        ),
        ({"workload": {"requests_per_second": 0}}, "workload.requests_per_second"),
        (
            {"workload": {"requests_per_second": 1.0}, "serving": {"scheduler": "static"}},
            "workload.requests_per_second",
        ),
        ({"slo": {"percentile": "p95"}}, "slo.percentile"),
        ({"serving": {"cuda_graph_max_batch": 0}}, "serving.cuda_graph_max_batch"),
    ],
)
def test_bad_scheduling_fields_are_named(request_fields: dict[str, Any], field: str) -> None:
    errors = errors_of(**{**NIM, **request_fields})
    assert field in errors, errors


def test_a_step_is_the_static_decode_step_and_the_static_prefill() -> None:
    """engine_step.T(d, 0) = speed.py's decode step at batch d; T(0, P) = its prefill of one prompt (1e-9)."""
    from dataclasses import replace

    from scalecost.engine.inference.model.engine_step import step_parts, step_seconds
    from scalecost.engine.inference.model.speed import token_speed

    for body in (NIM, {**NIM, "model": {"preset": "mixtral-8x7b"}, "weights": {"precision": "bf16"}}):
        p = parse_request({**body, "batch_size": 1}, CATALOG)
        parts = step_parts(p.workload, p.accelerator, 2)
        for batch in (1, 16, 96):
            static = token_speed(replace(p.workload, batch=batch), p.accelerator, 2)
            assert step_seconds(parts, np.array(float(batch)), np.array(0.0)) == pytest.approx(
                static.time_per_output_token_s, rel=1e-9
            )
        prefill = token_speed(p.workload, p.accelerator, 2).time_to_first_token_s
        one_prompt = step_seconds(parts, np.array(0.0), np.array(float(p.workload.prompt_tokens)))
        assert one_prompt == pytest.approx(prefill, rel=1e-9)


def test_a_cached_prefix_is_not_prefilled_again() -> None:
    cold = estimate(**NIM, batch_size=25)
    warm = estimate(**NIM, batch_size=25, workload={"prefix_hit_rate": 0.9})
    assert warm["latency"]["time_to_first_token_s"] < 0.5 * cold["latency"]["time_to_first_token_s"]
    assert warm["throughput"]["output_tokens_per_second"] > cold["throughput"]["output_tokens_per_second"]
    assert warm["load"]["prefill_time_share"] < cold["load"]["prefill_time_share"]


@pytest.mark.parametrize(
    "request_fields",
    [
        {"workload": {"prefix_hit_rate": 1.0}},
        {"workload": {"prefix_hit_rate": -0.1}},
        {"workload": {"prefix_hit_rate": 0.5}, "serving": {"scheduler": "static"}},
    ],
)
def test_prefix_hit_rates_outside_the_validity_range_are_refused(request_fields: dict[str, Any]) -> None:
    assert "workload.prefix_hit_rate" in errors_of(**{**NIM, **request_fields})


def test_speculative_decoding_accepts_the_expected_tokens_per_step() -> None:
    """Leviathan et al. (2023): k drafted tokens at acceptance α give (1 − α^(k+1))/(1 − α) tokens per step; a
    step verifying k + 1 rows per request plus the draft costs more, so TPOT falls by less than that factor."""
    body = {**NIM, "prompt_tokens": 500, "output_tokens": 2000, "batch_size": 1}
    plain = estimate(**body)
    spec = estimate(
        **body, serving={"speculative": {"method": "draft_model", "draft_tokens": 4, "acceptance_rate": 0.8}}
    )
    tokens = (1 - 0.8**5) / (1 - 0.8)
    ratio = plain["latency"]["time_per_output_token_s"] / spec["latency"]["time_per_output_token_s"]
    assert 1.5 < ratio < tokens
    assert spec["throughput"]["output_tokens_per_second"] > plain["throughput"]["output_tokens_per_second"]


@pytest.mark.parametrize(
    ("speculative", "field"),
    [
        ({"method": "medusa"}, "serving.speculative.method"),
        ({"method": "draft_model"}, "serving.speculative.acceptance_rate"),
        ({"method": "mtp", "acceptance_rate": 0.99}, "serving.speculative.acceptance_rate"),
        ({"method": "mtp", "draft_tokens": 9}, "serving.speculative.draft_tokens"),
        ({"method": "mtp", "draft_cost_ratio": 0}, "serving.speculative.draft_cost_ratio"),
    ],
)
def test_speculative_settings_outside_their_sources_are_refused(
    speculative: dict[str, Any], field: str
) -> None:
    assert field in errors_of(**{**NIM, "serving": {"speculative": speculative}})


def test_max_num_seqs_caps_the_requests_in_flight_under_a_rate() -> None:
    free = estimate(**NIM, workload={"requests_per_second": 0.3})
    capped = estimate(**NIM, workload={"requests_per_second": 0.3}, serving={"max_num_seqs": 1})
    assert not free["load"]["saturated"] and capped["load"]["saturated"]
    assert capped["load"]["sustainable_requests_per_second"] < free["load"]["sustainable_requests_per_second"]
    assert "serving.max_num_seqs" in errors_of(**NIM, serving={"max_num_seqs": 0})


SGLANG_70B = {  # DataCrunch's SGLang Llama 3.3 70B on 4 × H200 (public_serving_sweeps.csv, random 509 in / 534 out)
    **NIM,
    "model": {"preset": "llama-3.3-70b"},
    "weights": {"precision": "bf16"},
    "engine": "sglang",
    "prompt_tokens": 509,
    "output_tokens": 534,
    "hardware": {"accelerator": "nvidia-h200-sxm-141gb", "count": 4},
    "batch_size": 1,
}


def test_decode_beyond_the_cuda_graph_batch_is_launched_eagerly() -> None:
    """SGLang, Llama 3.3 70B on 4 × H200: a decode step of more requests than the CUDA-graph batch takes the longer of
    the GPU's time and 80 layers × 0.93 ms of eager launches (DataCrunch measured 70.8 ms per token at about 300 in
    flight with v0.4's 160); under the limit, and under today's default (512 at tp 4), the GPU time."""
    from scalecost.engine.inference.model.engine_step import step_parts, step_seconds

    body = dict(SGLANG_70B)
    old = parse_request({**body, "serving": {"cuda_graph_max_batch": 160}}, CATALOG)
    today = parse_request(body, CATALOG)
    eager, graphs = (
        step_parts(old.workload, old.accelerator, 4),
        step_parts(today.workload, today.accelerator, 4),
    )
    assert graphs.graph_rows == 512 and eager.graph_rows == 160
    assert eager.eager_s == pytest.approx(80 * 0.93e-3)
    zero = np.array(0.0)
    for d in (150.0, 300.0):
        gpu = float(step_seconds(graphs, np.array(d), zero))
        assert gpu < eager.eager_s
        expected = gpu if d <= 160 else eager.eager_s
        assert float(step_seconds(eager, np.array(d), zero)) == pytest.approx(expected, rel=1e-12)


def test_the_static_model_launches_eagerly_beyond_the_cuda_graph_batch_too() -> None:
    """The eager regime is one rule for both schedulers: a vLLM/SGLang request held to `serving.scheduler: static`
    at a batch above the CUDA-graph batch decodes at max(GPU time, 80 × 0.93 ms), as engine_step.py does, in the
    single estimate (speed.py) and in the planner's arrays (arrays.py) alike; below it, the GPU time."""
    from dataclasses import replace

    from scalecost.engine.inference.model.arrays import batch_speeds
    from scalecost.engine.inference.model.engine_step import step_parts, step_seconds
    from scalecost.engine.inference.model.speed import token_speed

    body = {**SGLANG_70B, "serving": {"cuda_graph_max_batch": 160, "scheduler": "static"}}
    p = parse_request(body, CATALOG)
    parts = step_parts(p.workload, p.accelerator, 4)
    batches = np.array([150.0, 300.0])
    arrays = batch_speeds(p.workload, p.accelerator, 4, batches).time_per_output_token_s
    for i, batch in enumerate(batches):
        static = token_speed(replace(p.workload, batch=int(batch)), p.accelerator, 4).time_per_output_token_s
        step = float(step_seconds(parts, np.array(batch), np.array(0.0)))
        assert static == pytest.approx(step, rel=1e-9) and arrays[i] == pytest.approx(static, rel=1e-9)
        assert (static == pytest.approx(80 * 0.93e-3, rel=1e-12)) == (batch > 160)


def test_no_eager_regime_off_gpus() -> None:
    """Gaudi's vLLM captures an HPU graph for every decode bucket up to max_num_seqs: a batch of 600 on 8 × Gaudi 3
    is not floored at the eager launch time (Intel's published 15,711 tok/s at batch 600 rests on it)."""
    from scalecost.engine.inference.model.engine_step import step_parts

    gaudi = parse_request(
        {**NIM, "engine": "vllm", "hardware": {"accelerator": "intel-gaudi3", "count": 8}, "batch_size": 600},
        CATALOG,
    )
    gpu = parse_request({**NIM, "engine": "vllm", "batch_size": 600}, CATALOG)
    assert step_parts(gaudi.workload, gaudi.accelerator, 8).graph_rows == float("inf")
    assert step_parts(gpu.workload, gpu.accelerator, 2).graph_rows == 512


def test_mla_layers_with_routed_experts_and_fused_moe_calls_pay_their_kernel_floors() -> None:
    """DeepSeek-V3 (3 dense + 58 MLA-MoE layers) on 8 × H200 under vLLM: the step overhead is (61 + 58 × 0.47) × 50 µs
    plus 58 fused-MoE calls of 30 µs (InferenceX #1004's decode profile: 135 µs per layer outside the experts;
    vLLM PR #24700's fused_moe benchmark: 30 µs per call; docs/formulas.md); Mixtral (MoE without MLA) 32 × (50 + 30)
    µs, a dense GQA model 80 × 50 µs. Every public DeepSeek decode point is slower than the model (the calibration
    print)."""
    from scalecost.engine.inference.model.speed import token_device

    def overhead(preset: str, count: int, accelerator: str = "nvidia-h200-sxm-141gb") -> float:
        body = {
            **NIM,
            "model": {"preset": preset},
            "engine": "vllm",
            "hardware": {"accelerator": accelerator, "count": count},
            "batch_size": 4,
        }
        p = parse_request(body, CATALOG)
        s = p.workload.model.shape
        assert s is not None
        return token_device(p.workload, p.accelerator, count, s.layers).step_overhead

    assert overhead("deepseek-v3", 8) == pytest.approx((61 + 58 * 0.47) * 50e-6 + 58 * 30e-6, rel=1e-12)
    assert overhead("llama-3.3-70b", 2) == pytest.approx(80 * 50e-6, rel=1e-12)
    assert overhead("mixtral-8x7b", 2) == pytest.approx(32 * (50e-6 + 30e-6), rel=1e-12)


def test_a_cuda_graph_batch_off_gpus_is_refused() -> None:
    gaudi = {
        **NIM,
        "engine": "vllm",
        "hardware": {"accelerator": "intel-gaudi3", "count": 8},
        "batch_size": 8,
    }
    errors = errors_of(**gaudi, serving={"cuda_graph_max_batch": 64})
    assert "intel-gaudi3" in errors["serving.cuda_graph_max_batch"][0]
    assert estimate(**gaudi)["load"]["scheduler"] == "continuous"
