"""Suggestions (catalog ranking) and recommendations: each change, applied, makes its claim true."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scalecost.engine.inference.estimate import estimate_inference
from scalecost.engine.patch import merge_patch

from .reference_catalog import load_catalog

CATALOG = load_catalog()

# (request, codes the scenario must produce)
SCENARIOS: list[tuple[dict[str, Any], set[str]]] = [
    (
        {
            "model": {"preset": "llama-2-7b"},
            "hardware": {"accelerator": "nvidia-rtx-4090"},
            "batch_size": 64,
            "prompt_tokens": 2048,
            "output_tokens": 1024,
        },
        {"more-devices", "reduce-batch", "reduce-context", "use-gqa-model"},
    ),
    (
        {
            "model": {"preset": "llama-3-70b"},
            "weights": {"precision": "fp8"},
            "kv_cache_precision": "fp8",
            "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 1},
            "batch_size": 8,  # 70 GB of fp8 weights fit the 81,559 MiB alone; their KV cache does not
            "prompt_tokens": 6144,
            "output_tokens": 1024,
        },
        {"quantize-weights-to-fit", "more-devices"},
    ),
    (
        {
            "model": {"preset": "llama-3-8b"},
            "hardware": {"accelerator": "nvidia-l4"},
            "batch_size": 8,
            "prompt_tokens": 5000,
            "output_tokens": 1000,
        },
        {"fp8-kv-cache"},
    ),
    (
        {
            "model": {"preset": "llama-3-70b"},
            "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 2},
            "batch_size": 16,  # fits, with room for fewer than twice as many
        },
        {"more-devices-for-headroom"},
    ),
    (
        {
            "model": {"preset": "llama-3-70b"},
            "targets": {"time_per_output_token_s": 0.02},
            "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 2},
        },
        {"more-devices-for-targets", "quantize-for-targets"},
    ),
    (
        {
            "model": {"preset": "llama-3-8b"},
            "engine": "hf-transformers",
            "hardware": {"accelerator": "nvidia-a100-sxm-80gb"},
        },
        {"switch-engine"},
    ),
    (
        {
            "model": {"preset": "llama-3-8b"},
            "weights": {"precision": "fp32"},
            "hardware": {"accelerator": "nvidia-h100-sxm-80gb"},
        },
        {"use-16-bit-weights"},
    ),
    (
        {"model": {"preset": "llama-3-8b"}, "hardware": {"accelerator": "nvidia-h100-sxm-80gb"}},
        {"raise-batch"},
    ),
    (
        {
            "model": {
                "architecture": "transformer",
                "layers": 32,
                "hidden_size": 4096,
                "attention_heads": 32,
                "vocab_size": 32000,
                "max_context_tokens": 32768,
            },
            "hardware": {"accelerator": "nvidia-a100-sxm-80gb"},
            "batch_size": 32,
            "prompt_tokens": 4096,
        },
        {"use-gqa-model"},
    ),
]


def _claim_holds(code: str, before: dict[str, Any], request: dict[str, Any], after: dict[str, Any]) -> bool:
    tps_before = before["throughput"]["output_tokens_per_second"]
    tps_after = after["throughput"]["output_tokens_per_second"]
    if code in {"quantize-weights-to-fit", "fp8-kv-cache", "more-devices", "reduce-batch", "reduce-context"}:
        return after["memory"]["fits"]
    if code == "use-gqa-model":
        heads = request["model"].get("attention_heads") or 32
        return (
            after["memory"]["kv_cache_bytes_per_token"] * heads
            == before["memory"]["kv_cache_bytes_per_token"] * 8
        )
    if code in {"more-devices-for-targets", "quantize-for-targets"}:
        return after["devices_needed"]["targets_met"] and after["memory"]["fits"]
    if code in {"use-16-bit-weights", "switch-engine"}:
        return tps_after > 1.5 * tps_before
    if code == "raise-batch":
        return after["memory"]["fits"] and tps_after > 1.3 * tps_before
    if code == "more-devices-for-headroom":
        return after["memory"]["max_batch_size"] >= 4 * request.get("batch_size", 1)
    raise AssertionError(f"unknown recommendation code {code}")


@pytest.mark.parametrize(("request_body", "expected"), SCENARIOS)
def test_every_recommendation_is_true_when_its_change_is_applied(
    request_body: dict[str, Any], expected: set[str]
) -> None:
    body = {**request_body, "output": {"suggestions": False}}
    before = estimate_inference(body, CATALOG)
    codes = {r["code"] for r in before["recommendations"]}
    assert expected <= codes, before["recommendations"]
    for rec in before["recommendations"]:
        assert rec["severity"] in {"info", "warning"} and rec["message"]
        after = estimate_inference(merge_patch(body, rec["change"]), CATALOG)
        assert _claim_holds(rec["code"], before, body, after), rec
        expected = rec["expected"]  # the machine-readable claim holds too
        value = after
        for key in expected["field"].split("."):
            value = value[key]
        assert {"==": value == expected["value"], ">=": value >= expected["value"]}[expected["op"]], rec


def test_suggestions_rank_by_cost_per_million_tokens_among_those_meeting_targets() -> None:
    body = {
        "model": {"preset": "llama-3-70b"},
        "weights": {"precision": "fp8"},
        "targets": {"time_per_output_token_s": 0.03},
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": "auto"},
    }
    rows = estimate_inference(body, CATALOG)["suggestions"]
    assert rows and all(r["fits"] for r in rows)
    meeting = [r for r in rows if r["meets_targets"]]
    assert rows[: len(meeting)] == meeting  # meeting targets first
    costs = [
        r["usd_per_million_output_tokens"] for r in meeting if r["usd_per_million_output_tokens"] is not None
    ]
    assert costs == sorted(costs)
    for row in rows[:3]:  # a suggestion re-estimated on its own says the same
        again = estimate_inference(
            {
                **body,
                "hardware": {"accelerator": row["accelerator"], "count": row["count"]},
                "output": {"suggestions": False},
            },
            CATALOG,
        )
        assert again["memory"]["fits"]
        assert again["throughput"]["output_tokens_per_second"] == pytest.approx(
            row["output_tokens_per_second"]
        )


def test_suggestions_skip_hardware_the_engine_cannot_use() -> None:
    vllm = estimate_inference(
        {"model": {"preset": "llama-3-8b"}, "hardware": {"accelerator": "nvidia-l4"}}, CATALOG
    )
    assert not any(r["accelerator"].startswith("apple-") for r in vllm["suggestions"])
    trt = estimate_inference(
        {
            "model": {"preset": "llama-3-8b"},
            "engine": "tensorrt-llm",
            "hardware": {"accelerator": "nvidia-l4"},
        },
        CATALOG,
    )
    assert all(CATALOG.accelerators[r["accelerator"]].vendor == "NVIDIA" for r in trt["suggestions"])
    metal = estimate_inference(
        {
            "model": {"preset": "llama-3-8b"},
            "engine": "llama.cpp",
            "hardware": {"accelerator": "apple-m2-ultra"},
        },
        CATALOG,
    )
    assert any(r["accelerator"] == "apple-m2-ultra" for r in metal["suggestions"])


def test_suggestions_can_be_turned_off() -> None:
    r = estimate_inference(
        {
            "model": {"preset": "llama-3-8b"},
            "hardware": {"accelerator": "nvidia-l4"},
            "output": {"suggestions": False},
        },
        CATALOG,
    )
    assert r["suggestions"] == []


@settings(max_examples=40, deadline=None)
@given(price=st.floats(0.01, 100.0), factor=st.floats(1.5, 10.0))
def test_cost_is_linear_in_price(price: float, factor: float) -> None:
    def cost(p: float) -> dict[str, Any]:
        body = {
            "model": {"preset": "llama-3-8b"},
            "hardware": {"accelerator": "nvidia-l4", "count": 2},
            "cost": {"usd_per_accelerator_hour": p},
            "output": {"suggestions": False},
        }
        return estimate_inference(body, CATALOG)["cost"]

    base, scaled = cost(price), cost(price * factor)
    for key in ("usd_per_hour", "usd_per_million_output_tokens", "usd_per_million_input_tokens"):
        assert math.isclose(scaled[key], base[key] * factor, rel_tol=1e-9)
