"""The fused MoE kernel of the CUDA-graph engines against its public kernel benchmark (efficiency.py): one MoE
layer's time is the fused call's floor plus the routed experts the batch touches, streamed at the engine's expert
rate. vLLM PR #24700 (github.com/vllm-project/vllm/pull/24700, 2025-09, "Benchmarks on H100": benchmark_moe.py with
the tuned configs, uniformly random routing, kernel time per layer in µs; Qwen3-30B-A3B the PR's column)."""

from __future__ import annotations

import pytest
from scalecost.engine.inference.model.efficiency import (
    bandwidth_efficiency,
    moe_expert_efficiency,
    moe_layer_floor_s,
)
from scalecost.engine.models import PRESETS

from .reference_catalog import load_catalog

H100 = load_catalog().accelerators["nvidia-h100-sxm-80gb"]
# (preset, bytes per weight, MBU family, tensor degree) → {batch: measured µs}
KERNEL_TIMES = {
    ("mixtral-8x7b", 2, "16-bit", 2): {
        1: 144.03, 2: 229.28, 4: 351.10, 8: 434.98, 16: 471.49, 32: 487.35, 64: 483.14, 128: 491.39,
    },
    ("qwen3-30b-a3b", 1, "fp8", 1): {
        1: 40.44, 2: 56.15, 4: 78.10, 8: 118.64, 16: 164.64, 32: 210.07, 64: 237.26, 128: 247.67,
    },
}  # fmt: skip
POINTS = [(key, batch, us) for key, times in KERNEL_TIMES.items() for batch, us in times.items()]


def predicted_us(preset: str, bytes_per_weight: int, family: str, tp: int, batch: int) -> float:
    s = PRESETS[preset].shape
    assert s is not None
    expert = 3 * s.hidden_size * s.expert_ffn_hidden_size * bytes_per_weight / tp  # gate, up, down: one shard
    touched = s.experts * (1.0 - (1.0 - s.experts_per_token / s.experts) ** batch)
    rate = (
        H100.memory_bandwidth_bytes_per_s
        * bandwidth_efficiency("vllm", "hbm-gpu", family).value
        * moe_expert_efficiency("vllm", "hbm-gpu").value
    )
    return (moe_layer_floor_s("vllm", "hbm-gpu") + touched * expert / rate) * 1e6


@pytest.mark.parametrize(("key", "batch", "measured"), POINTS, ids=[f"{k[0]}-b{b}" for k, b, _ in POINTS])
def test_one_moe_layer_within_nine_percent_of_the_kernel_benchmark(key, batch, measured) -> None:
    predicted = predicted_us(*key, batch)
    error = predicted / measured - 1.0
    print(
        f"{key[0]:14} batch {batch:4d}: measured {measured:7.2f} µs, predicted {predicted:7.2f} µs ({error:+.1%})"
    )
    assert abs(error) <= 0.09


def test_the_engines_without_a_fused_kernel_keep_gpt_fasts_rate() -> None:
    assert moe_expert_efficiency("llama.cpp", "hbm-gpu").value == 0.65
    assert moe_layer_floor_s("llama.cpp", "hbm-gpu") == 0.0
    assert (
        moe_expert_efficiency("sglang", "hbm-gpu").value
        == moe_expert_efficiency("tensorrt-llm", "gddr-gpu").value
    )
    assert moe_expert_efficiency("sglang", "hbm-gpu").value == 1.10
    # the kernel was measured on GPUs: vLLM on Gaudi (class asic) keeps gpt-fast's rate and no floor
    assert moe_expert_efficiency("vllm", "asic").value == 0.65 and moe_layer_floor_s("vllm", "asic") == 0.0


def test_the_answer_states_the_moe_rate_and_floor_it_used() -> None:
    from scalecost.engine.inference.estimate import estimate_inference

    body = {
        "model": {"preset": "mixtral-8x7b"},
        "engine": "vllm",
        "hardware": {"accelerator": "nvidia-h100-sxm-80gb", "count": 2},
        "output": {"suggestions": False, "recommendations": False},
    }
    assumptions = estimate_inference(body, load_catalog())["assumptions"]
    assert assumptions["moe_expert_efficiency"] == 1.10 and assumptions["moe_layer_floor_s"] == 30e-6
    dense = estimate_inference({**body, "model": {"preset": "llama-3-8b"}}, load_catalog())["assumptions"]
    assert "moe_layer_floor_s" not in dense


def test_an_mla_model_states_the_layer_ratio_it_used() -> None:
    from scalecost.engine.inference.estimate import estimate_inference

    body = {
        "model": {"preset": "deepseek-v3"},
        "weights": {"precision": "fp8"},
        "engine": "sglang",
        "hardware": {"accelerator": "nvidia-h200-sxm-141gb", "count": 8},
        "output": {"suggestions": False, "recommendations": False},
    }
    assert estimate_inference(body, load_catalog())["assumptions"]["mla_moe_layer_overhead_ratio"] == 1.47
