"""slo.front_end_latency_s: the latency before the engine (HTTP, gateway, tokenization) that every continuous-batching
TTFT counts; 35 ms by default (docs/formulas.md "Front-end latency per request"), the request's own when given, in
the estimate, the planner and the estimate body a plan hands back."""

from __future__ import annotations

from typing import Any

import pytest
from scalecost.engine.errors import InvalidRequest
from scalecost.engine.inference.estimate import estimate_inference
from scalecost.engine.inference.planner import plan_serving
from scalecost.engine.inference.search.request import parse_plan_request

from .reference_catalog import load_catalog

CATALOG = load_catalog()
QUIET = {"suggestions": False, "recommendations": False}
ONE_USER = {  # GPUStack's vLLM Qwen3-8B on one H100 at concurrency 1 (public_serving_sweeps.csv)
    "model": {"preset": "qwen3-8b"},
    "weights": {"precision": "bf16"},
    "engine": "vllm",
    "prompt_tokens": 233,
    "output_tokens": 221,
    "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 1},
    "batch_size": 1,
    "output": QUIET,
}
PLAN = {
    "model": {"preset": "llama-3.1-8b"},
    "workload": {"requests_per_second": 5, "prompt_tokens": 512, "output_tokens": 256},
    "search": {"accelerators": ["nvidia-h100-sxm-80gb"], "engines": ["vllm"], "devices_per_replica": [1]},
}


def ttft(**slo: Any) -> tuple[float, dict[str, Any]]:
    answer = estimate_inference({**ONE_USER, "slo": slo}, CATALOG)
    return answer["latency"]["time_to_first_token_s"], answer


def test_the_default_is_35_ms_and_a_given_one_replaces_it() -> None:
    default, answer = ttft()
    none, _ = ttft(front_end_latency_s=0)
    gateway, stated = ttft(front_end_latency_s=0.2)
    assert answer["load"]["front_end_latency_s"] == 0.035 and stated["load"]["front_end_latency_s"] == 0.2
    # one user: no other prompt to wait for, so the TTFT moves by the front end alone
    assert default - none == pytest.approx(0.035, rel=1e-3)
    assert gateway - none == pytest.approx(0.2, rel=1e-3)
    # the decode is the engine's (read off the same load curve: equal to interpolation, 1e-4)
    assert answer["latency"]["time_per_output_token_s"] == pytest.approx(
        stated["latency"]["time_per_output_token_s"], rel=1e-4
    )


@pytest.mark.parametrize("value", [-0.001, 10.5, "fast", True, float("nan")])
def test_a_bad_front_end_latency_is_named(value: Any) -> None:
    with pytest.raises(InvalidRequest) as exc:
        estimate_inference({**ONE_USER, "slo": {"front_end_latency_s": value}}, CATALOG)
    assert "slo.front_end_latency_s" in exc.value.errors
    with pytest.raises(InvalidRequest) as plan_exc:
        parse_plan_request(
            {
                **PLAN,
                "slo": {
                    "time_to_first_token_s": 1,
                    "time_per_output_token_s": 0.05,
                    "front_end_latency_s": value,
                },
            },
            CATALOG,
        )
    assert "slo.front_end_latency_s" in plan_exc.value.errors


def test_the_planner_holds_the_ttft_objective_with_the_front_end_in_it() -> None:
    """A 300 ms gateway under a 400 ms TTFT objective: the plan's TTFT includes it, the plan's estimate body carries
    it (so the estimate reproduces the plan's latency), and a gateway slower than the objective leaves no plan."""
    slo = {"time_to_first_token_s": 0.4, "time_per_output_token_s": 0.05}
    plain = plan_serving({**PLAN, "slo": slo}, CATALOG)
    slow = plan_serving({**PLAN, "slo": {**slo, "front_end_latency_s": 0.3}}, CATALOG)
    assert slow["slo"]["front_end_latency_s"] == 0.3 and plain["slo"]["front_end_latency_s"] == 0.035
    assert "front_end_latency_s" not in plain["plan"]["estimate_request"]["slo"]
    body = slow["plan"]["estimate_request"]
    assert body["slo"]["front_end_latency_s"] == 0.3
    seen = slow["plan"]["latency"]["time_to_first_token_s"]
    assert 0.3 < seen <= 0.4
    assert seen > plain["plan"]["latency"]["time_to_first_token_s"] + 0.2
    again = estimate_inference(body, CATALOG)
    assert again["latency"]["time_to_first_token_s"] == pytest.approx(seen, rel=1e-9)
    none = plan_serving({**PLAN, "slo": {**slo, "front_end_latency_s": 0.45}}, CATALOG)
    assert none["plan"] is None
